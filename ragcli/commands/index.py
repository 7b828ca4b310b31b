"""`rag index`, `rag search`, `rag status`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from ..app import app
from ..config import load_config


def _filters(path: Optional[str], tag: Optional[str], since: Optional[str], until: Optional[str]):
    from ..retrieve import Filters

    return Filters(path=path, tag=tag, since=since, until=until)


@app.command("index")
def index_cmd(
    paths: List[Path] = typer.Argument(None, help="Folders to index (default: the ones indexed before)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Drop the index and build it again."),
    embed_model: Optional[str] = typer.Option(None, "--embed-model", help="GGUF embedding model file."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Build or update the index of a notes folder (Markdown, Obsidian, PDF), incrementally."""
    from .. import render
    from ..pipeline import index

    config = load_config({"embed_model": embed_model})
    with _IndexProgress() as progress:
        report = index(config, paths or None, rebuild=rebuild, progress=progress)
    if as_json:
        render.print_json(report.as_dict())
        return
    _print_index_report(report)


class _IndexProgress:
    """Turns pipeline events into a progress bar on stderr (only on a terminal)."""

    def __init__(self):
        from .. import render

        self.render = render
        self.bar = None
        self.chunks = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False

    def __call__(self, event: str, data: dict) -> None:
        if event == "message":
            self.render.info(data["text"])
        elif event == "start" and data["total"]:
            self.bar = self.render.progress(total=data["total"], description="Indexing").__enter__()
        elif event == "file" and self.bar is not None:
            self.chunks += data["chunks"]
            self.bar.update(advance=1, extra=f"{self.chunks} chunks")


def _print_index_report(report) -> None:
    from ..render import clean, err, out

    out().print(f"Indexed {report.files_indexed} file(s) ({report.chunks_added} chunks added, "
                f"{report.chunks_removed} removed); {report.files_unchanged} unchanged, "
                f"{report.files_removed} removed, {len(report.files_failed)} skipped "
                f"in {report.seconds:.2f}s.")
    for failure in report.files_failed:
        err().print(f"skipped {clean(failure.path)}: {clean(failure.reason)}", style="yellow")
    for warning in report.warnings:
        err().print(f"note {clean(warning['path'])}: {clean(warning['warning'])}", style="dim")


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
    from ..retrieve import search

    config = load_config({"mode": mode})
    hits = search(config, query, k=k, mode=config.mode, filters=_filters(path, tag, since, until))
    if as_json:
        render.print_json({"query": query, "mode": config.mode, "results": [hit_json(h) for h in hits]})
        return
    if not hits:
        render.err().print("No results.")
        return
    for hit in hits:
        _print_hit(hit)


def hit_json(hit) -> dict:
    c = hit.chunk
    return {"rank": hit.rank, "path": c.path, "title": c.title, "heading": c.heading,
            "line_start": c.line_start, "line_end": c.line_end, "page": c.page,
            "score": round(hit.score, 6), "vector_score": hit.vector_score,
            "keyword_score": hit.keyword_score, "text": c.text}


def location(chunk) -> str:
    """`path:lines › heading (p. N)`: where a passage came from, as people cite it."""
    where = f"{chunk.path}:{chunk.line_start}-{chunk.line_end}"
    if chunk.heading:
        where += f" › {chunk.heading}"
    if chunk.page:
        where += f" (p. {chunk.page})"
    return where


def _print_hit(hit) -> None:
    from ..render import clean, out

    snippet = " ".join(clean(hit.chunk.text).split())
    if len(snippet) > 240:
        snippet = snippet[:237] + "..."
    out().print(f"{hit.rank}. {clean(location(hit.chunk))}  [{hit.score:.4f}]", style="bold")
    out().print(f"   {snippet}")


@app.command("status")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """What is indexed: roots, files, chunks, model, size, last run, and a running watcher."""
    from .. import render
    from ..status import index_status

    info = index_status(load_config())
    if as_json:
        render.print_json(info)
        return
    o = render.out()
    if not info["exists"]:
        o.print(f"No index yet at {info['index_dir']}. Build one: rag index ~/notes")
        return
    o.print(f"Index:      {info['index_dir']} ({info['index_bytes'] / 1e6:.1f} MB)")
    o.print(f"Roots:      {', '.join(info['roots']) or '-'}")
    o.print(f"Files:      {info['files']}    Chunks: {info['chunks']}")
    o.print(f"Embedding:  {info['embedding_model'] or '-'}")
    last = info.get("last_indexed")
    o.print(f"Last index: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(last)) if last else '-'}")
    writer = info.get("writer")
    if writer:
        o.print(f"Writer:     rag {writer.get('role')} (pid {writer.get('pid')}) since "
                f"{time.strftime('%H:%M:%S', time.localtime(writer.get('since', 0)))}")
    watcher = info.get("watcher")
    if watcher:
        o.print(f"Watcher:    pid {watcher.get('pid')}, pending changes: {watcher.get('pending', 0)}")
