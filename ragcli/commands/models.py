"""`rag models`, `rag models pull`, `rag doctor`."""

from __future__ import annotations

from typing import Optional

import typer

from ..app import app
from ..config import load_config

models_app = typer.Typer(help="Which model each role uses; download others.", no_args_is_help=False)
app.add_typer(models_app, name="models")


@models_app.callback(invoke_without_command=True)
def models_cmd(ctx: typer.Context,
               as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List the models: role (embedding, generation), file, source, size, present."""
    if ctx.invoked_subcommand is not None:
        return
    from .. import render
    from ..doctor import model_specs

    config = load_config()
    specs = model_specs(config)
    if as_json:
        render.print_json([{k: (str(v) if k == "path" else v) for k, v in s.items()} for s in specs])
        return
    console = render.out()
    for s in specs:
        if s.get("error"):
            console.print(f"{s['role']:<11} error: {render.clean(s['error'])}")
            continue
        size = "-" if s.get("size") is None else f"{s['size'] / 1e6:.1f} MB"
        present = "present" if s["present"] else "missing"
        console.print(f"{s['role']:<11} {render.clean(str(s['path']))}")
        console.print(f"{'':<11} {render.clean(s['source'])}; {size}; {present}", style="dim")


@models_app.command("pull")
def pull_cmd(
    name: str = typer.Argument(..., help="hf://owner/repo/file.gguf, owner/repo:file.gguf or an http(s) URL."),
    sha256: Optional[str] = typer.Option(None, "--sha256", help="Expected SHA-256 of the file."),
    set_role: Optional[str] = typer.Option(None, "--set", help="Use it: write embed_model or llm_model (embed|llm) to config.toml."),
    filename: Optional[str] = typer.Option(None, "--name", help="File name to save as (default: from the URL)."),
    force: bool = typer.Option(False, "--force", help="Download again even if the file exists."),
) -> None:
    """Download a GGUF model into the models folder (resumable, checksum-checked)."""
    from .. import render
    from ..download import pull, set_model_in_config
    from ..errors import UsageError

    if set_role is not None and set_role not in ("embed", "llm"):
        raise UsageError(f"--set takes embed or llm, got {set_role!r}")
    config = load_config()
    with _DownloadProgress(name) as progress:
        path = pull(name, config.models_dir, sha256=sha256, filename=filename, on_progress=progress,
                    force=force)
    render.out().print(str(path))
    if set_role:
        set_model_in_config(config.config_file, set_role, path)
        key = "embed_model" if set_role == "embed" else "llm_model"
        render.info(f"{key} = {path} (in {config.config_file})")
        if set_role == "embed":
            render.info("The index was built with another model: run `rag index --rebuild`.")


class _DownloadProgress:
    """A byte progress bar on stderr, only on a terminal."""

    def __init__(self, name: str):
        self.name, self.bar, self.task = name, None, None

    def __enter__(self):
        from .. import render

        if render.stderr_is_terminal():
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                                       TimeRemainingColumn, TransferSpeedColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                TransferSpeedColumn(), TimeRemainingColumn(), console=render.err(),
                                transient=True)
            self.bar.__enter__()
            self.task = self.bar.add_task(render.clean(self.name)[-40:], total=None)
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False

    def __call__(self, done: int, total: int | None) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done, total=total)


@app.command("doctor")
def doctor_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    no_load: bool = typer.Option(False, "--no-load", help="Do not load the generation model."),
) -> None:
    """Check the installation: llama.cpp build, models, index, versions; each problem with its fix."""
    from .. import render
    from ..doctor import FAIL, WARN, diagnose, exit_code

    config = load_config()
    checks = diagnose(config, load_models=not no_load)
    code = exit_code(checks)
    if as_json:
        render.print_json({"ok": code == 0, "checks": [c.to_json() for c in checks]})
    else:
        console = render.out()
        area = None
        for c in checks:
            if c.area != area:
                area = c.area
                console.print(area, style="bold")
            mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[c.status]
            style = "red" if c.status == FAIL else ("yellow" if c.status == WARN else None)
            console.print(f"  {mark} {c.name}: {render.clean(c.detail)}", style=style)
            if c.fix and c.status != "ok":
                console.print(f"       fix: {render.clean(c.fix)}", style="dim")
        if code == 0:
            console.print("All good.")
    if code:
        from ..errors import RagError

        failed = [c.name for c in checks if c.status == FAIL]
        error = RagError(f"{len(failed)} check(s) failed: {', '.join(failed)}",
                         hint="Each FAIL above comes with its fix." if not as_json else
                         "Each failed check in the JSON comes with its fix.")
        error.exit_code = code  # the failing area's code (5 for a model, ...)
        raise error
