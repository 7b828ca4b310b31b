"""What `rag search` and `rag ask` do once their options are parsed, shared by the Typer
commands and by the CLI's fast path (``ragcli.fast``), so that both print the same bytes.
Both go through ``Notes``, which asks a running watcher first.

No typer here, and nothing heavy at the top: through a running watcher these run in a process
that never imports typer, chromadb, numpy or llama.cpp. Without one they load what they need.
"""

from __future__ import annotations

import sys

from .. import render
from ..config import load_config
from ..library import Notes


def search(query: str, k: int | None, mode: str | None, path: str | None, tag: str | None,
           since: str | None, until: str | None, as_json: bool) -> None:
    config = load_config({"mode": mode, "top_k": k})
    with Notes(config) as notes:  # a running watcher answers warm; else this process searches
        hits = notes.search(query, config.top_k, config.mode, path=path, tag=tag, since=since, until=until)
    waiting = _say_pending(notes.vectors_pending)
    if as_json:
        data = {"query": query, "mode": config.mode, "results": [h.to_json() for h in hits]}
        render.print_json({**data, **waiting})
    else:
        render.print_hits(hits)


def _say_pending(counts: tuple[int, int] | None) -> dict:
    """One line on stderr while `rag index` has chunks left to embed, and the JSON keys that
    say the same; nothing (so the same bytes as before) when every chunk has its vector."""
    if not counts or not counts[0]:
        return {}
    waiting, total = counts
    render.err().print(f"note: {waiting:,} of {total:,} chunks have no vector yet (`rag index` embeds "
                       "them); those are ranked by their keywords alone.")
    return {"vectors_pending": {"without_vector": waiting, "chunks": total}}


def answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score):
    return load_config({"llm_model": model, "temperature": temperature, "max_tokens": max_tokens,
                        "n_ctx": ctx, "threads": threads, "n_gpu_layers": gpu_layers,
                        "top_k": k, "mode": mode, "min_score": min_score})


def ask(question: str, quotes: bool, model: str | None, temperature: float | None,
        max_tokens: int | None, ctx: int | None, threads: int | None, gpu_layers: int | None,
        k: int | None, mode: str | None, min_score: float | None, as_json: bool,
        verbose: bool = False) -> None:
    """On a terminal the quotes print as soon as they are chosen and the checked sentences as
    they come, whether the watcher answers or this process does."""
    config = answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    stream = not as_json and sys.stdout.isatty()
    with Notes(config) as notes:
        result = notes.ask(question, quotes_only=quotes,
                           on_quotes=render.print_quotes if stream else None,
                           on_token=render.stream_to_stdout if stream else None,
                           on_started=render.out)  # rich's import overlaps the watcher's work
    waiting = _say_pending(notes.vectors_pending)
    if as_json:
        render.print_json({**result.to_json(), **waiting})
    else:
        render.print_answer(result, streamed=stream, verbose=verbose)

