"""`rag index`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..app import app
from ..config import load_config
from .options import GPU


@app.command("index")
def index_cmd(
    paths: List[Path] = typer.Argument(None, help="Folders to index (default: the ones indexed before)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Drop the index and build it again."),
    embed_model: Optional[str] = typer.Option(None, "--embed-model", help="GGUF embedding model file."),
    gpu_layers: Optional[int] = GPU,
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Build or update the index of a notes folder (Markdown, Obsidian, PDF), incrementally."""
    from .. import render
    from ..library import Notes

    config = load_config({"embed_model": embed_model, "n_gpu_layers": gpu_layers})
    with Notes(config) as notes, render.progress_reporter() as progress:
        report = notes.index(paths or None, rebuild=rebuild, progress=progress)
    if as_json:
        render.print_json(report.to_json())
        return
    _print_index_report(report)


def _print_index_report(report) -> None:
    from ..render import clean, err, out

    if report.reread:
        out().print("This version of ragcli cuts notes into chunks differently: every file was read again "
                    "(vectors already made were reused).")
    out().print(f"Indexed {report.files_indexed} file(s) ({report.chunks_added} chunks added, "
                f"{report.chunks_removed} removed); {report.files_unchanged} unchanged, "
                f"{report.files_removed} removed, {len(report.files_failed)} skipped "
                f"in {report.seconds:.2f}s.")
    if report.embedded:  # the two phases: keyword rows first, then the vectors
        out().print(f"Keyword search was ready after {report.keyword_seconds:.2f}s; "
                    f"{report.embedded} chunk vector(s) embedded after that.")
    for failure in report.files_failed:
        err().print(f"skipped {clean(failure.path)}: {clean(failure.reason)}", style="yellow")
    for warning in report.warnings:
        err().print(f"note {clean(warning['path'])}: {clean(warning['warning'])}", style="dim")
