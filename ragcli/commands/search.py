"""`rag search`."""

from __future__ import annotations

from typing import Optional

import typer

from ..app import app
from ..config import load_config


@app.command("search")
def search_cmd(
    query: str = typer.Argument(..., help="What to look for."),
    k: int = typer.Option(10, "-k", "--top", help="How many results."),
    mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (default), vector or keyword."),
    path: Optional[str] = typer.Option(None, "--path", help="Only files whose path matches this glob."),
    tag: Optional[str] = typer.Option(None, "--tag", help="Only notes with this tag."),
    since: Optional[str] = typer.Option(None, "--since", help="Only notes dated on or after (YYYY-MM-DD)."),
    until: Optional[str] = typer.Option(None, "--until", help="Only notes dated on or before (YYYY-MM-DD)."),
    as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
) -> None:
    """Search the index (no generation): ranked passages with where they came from."""
    from .. import render
    from ..serve.client import daemon_search

    config = load_config({"mode": mode})
    where = {"path": path, "tag": tag, "since": since, "until": until}
    hits = daemon_search(config, query, k, config.mode, where)  # warm, when `rag watch` runs
    if hits is None:
        from ..retrieve import Filters, search

        hits = search(config, query, k=k, mode=config.mode, filters=Filters(**where))
    if as_json:
        render.print_json({"query": query, "mode": config.mode, "results": [h.to_json() for h in hits]})
        return
    if not hits:
        render.err().print("No results.")
        return
    for hit in hits:
        _print_hit(hit)


def _print_hit(hit) -> None:
    from ..render import clean, location, out

    snippet = " ".join(clean(hit.chunk.text).split())
    if len(snippet) > 240:
        snippet = snippet[:237] + "..."
    out().print(f"{hit.rank}. {clean(location(hit.chunk))}  [{hit.score:.4f}]", style="bold")
    out().print(f"   {snippet}")
