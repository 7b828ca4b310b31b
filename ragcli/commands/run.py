"""What `rag search` and `rag ask` do once their options are parsed, shared by the Typer
commands and by the CLI's fast path (``ragcli.fast``), so that both print the same bytes.

No typer here, and nothing heavy at the top: through a running watcher these run in a process
that never imports typer, chromadb, numpy or llama.cpp. Without one they load what they need.
"""

from __future__ import annotations

import sys

from .. import render
from ..config import load_config


def search(query: str, k: int | None, mode: str | None, path: str | None, tag: str | None,
           since: str | None, until: str | None, as_json: bool) -> None:
    from ..serve.client import daemon_search

    config = load_config({"mode": mode, "top_k": k})
    where = {"path": path, "tag": tag, "since": since, "until": until}
    hits = daemon_search(config, query, config.top_k, config.mode, where)  # warm, when `rag watch` runs
    if hits is None:
        from ..retrieve import Filters, search as search_index

        hits = search_index(config, query, k=config.top_k, mode=config.mode, filters=Filters(**where))
    if as_json:
        render.print_json({"query": query, "mode": config.mode, "results": [h.to_json() for h in hits]})
    else:
        render.print_hits(hits)


def answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score):
    return load_config({"llm_model": model, "temperature": temperature, "max_tokens": max_tokens,
                        "n_ctx": ctx, "threads": threads, "n_gpu_layers": gpu_layers,
                        "top_k": k, "mode": mode, "min_score": min_score})


def ask(question: str, quotes: bool, model: str | None, temperature: float | None,
        max_tokens: int | None, ctx: int | None, threads: int | None, gpu_layers: int | None,
        k: int | None, mode: str | None, min_score: float | None, as_json: bool) -> None:
    """On a terminal the quotes print as soon as they are chosen and the checked sentences as
    they come, whether the watcher answers or this process does."""
    from ..serve.client import daemon_answer

    config = answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    stream = not as_json and sys.stdout.isatty()
    on_quotes = render.print_quotes if stream else None
    on_token = render.stream_to_stdout if stream else None
    result = daemon_answer(config, question, on_token=on_token, on_quotes=on_quotes, quotes_only=quotes,
                           on_started=render.out)  # rich's import overlaps the watcher's work
    if result is None:
        from ..pipeline.answer import answer

        require_index(config)
        result = answer(config, question, quotes_only=quotes, on_quotes=on_quotes, on_token=on_token)
    if as_json:
        render.print_json(result.to_json())
    else:
        render.print_answer(result, streamed=stream)


def require_index(config) -> None:
    from ..errors import NoIndexError
    from ..store import index_exists

    if not index_exists(config):
        raise NoIndexError(f"no index in {config.index_dir}")
