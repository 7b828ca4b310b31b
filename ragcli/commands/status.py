"""`rag status`."""

from __future__ import annotations

import time

import typer

from ..app import app
from ..config import load_config


@app.command("status")
def status_cmd(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """What is indexed: roots, files, chunks, model, size, last run, and a running watcher."""
    from .. import render
    from ..library import Notes

    with Notes(load_config()) as notes:
        info = notes.status()
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
    waiting = info.get("vectors_pending") or 0
    if waiting:
        resume = ", `rag index` resumes it" if info.get("phase") == "embedding interrupted" else ""
        o.print(f"Phase:      {info['phase']}{resume}: {info['chunks'] - waiting:,} of {info['chunks']:,} "
                "chunks have a vector (keyword search finds them all)")
    server = info.get("chroma_server")
    if server:
        o.print(f"Vectors:    Chroma server {server['url']}, collection {server['collection']}")
    last = info.get("last_indexed")
    o.print(f"Last index: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(last)) if last else '-'}")
    writer = info.get("writer")
    if writer:
        o.print(f"Writer:     rag {writer.get('role')} (pid {writer.get('pid')}) since "
                f"{time.strftime('%H:%M:%S', time.localtime(writer.get('since', 0)))}")
    watcher = info.get("watcher")
    if watcher:
        o.print(f"Watcher:    pid {watcher.get('pid')}, pending changes: {watcher.get('pending', 0)}, since "
                f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(watcher.get('since') or 0))}")
        if watcher.get("passages"):
            from ..maintenance.status import passages_line

            o.print(f"            passages: {passages_line(watcher['passages'])}")
        answering = "answering" if watcher.get("answering") else "not answering"
        o.print(f"            socket: {watcher.get('socket') or '-'} ({answering}); "
                f"log: {watcher.get('log') or 'stderr (foreground)'}")
