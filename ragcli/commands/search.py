"""`rag search`."""

from __future__ import annotations

from typing import Optional

import typer

from ..app import app


@app.command("search")
def search_cmd(
    query: str = typer.Argument(..., help="What to look for."),
    k: Optional[int] = typer.Option(None, "-k", "--top-k", help="How many results (default: top_k, 5)."),
    mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (default), vector or keyword."),
    path: Optional[str] = typer.Option(None, "--path", help="Only files whose path matches this glob."),
    tag: Optional[str] = typer.Option(None, "--tag", help="Only notes with this tag."),
    since: Optional[str] = typer.Option(None, "--since", help="Only notes dated on or after (YYYY-MM-DD)."),
    until: Optional[str] = typer.Option(None, "--until", help="Only notes dated on or before (YYYY-MM-DD)."),
    as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
) -> None:
    """Search the index (no generation): ranked passages with where they came from."""
    from .run import search

    search(query, k, mode, path, tag, since, until, as_json)
