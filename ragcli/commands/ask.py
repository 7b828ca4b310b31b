"""`rag ask`: an answer from the notes, with numbered sources."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from ..app import app
from .options import (CTX, GPU, JSON, K, MAX_TOKENS, MIN_SCORE, MODE, MODEL, TEMPERATURE,
                      THREADS, answer_config, require_index)


@app.command("ask")
def ask_cmd(
    question: str = typer.Argument(..., help="The question to answer from your notes."),
    model: Optional[str] = MODEL, temperature: Optional[float] = TEMPERATURE,
    max_tokens: Optional[int] = MAX_TOKENS, ctx: Optional[int] = CTX,
    threads: Optional[int] = THREADS, gpu_layers: Optional[int] = GPU,
    k: Optional[int] = K, mode: Optional[str] = MODE, min_score: Optional[float] = MIN_SCORE,
    as_json: bool = JSON,
) -> None:
    """Answer a question from your notes, with numbered citations and sources."""
    from .. import render
    from ..serve.client import daemon_answer

    config = answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    stream = not as_json and sys.stdout.isatty()
    on_token = stream_to_stdout if stream else None
    result = daemon_answer(config, question, on_token=on_token)  # warm, when `rag watch` runs
    if result is None:
        from ..pipeline.answer import answer

        require_index(config)
        result = answer(config, question, on_token=on_token)
    if as_json:
        render.print_json(result.to_json())
    else:
        print_answer(result, streamed=stream and result.covered)


def stream_to_stdout(piece: str) -> None:
    from ..render import clean

    sys.stdout.write(clean(piece))
    sys.stdout.flush()


def print_answer(result, *, streamed: bool) -> None:
    """The answer (unless it was streamed already), then its sources."""
    from ..render import clean, out, source_line, warn

    console = out()
    if streamed:
        sys.stdout.write("\n")
    else:
        console.print(clean(result.text))
    if result.sources:
        console.print("")
        console.print("Sources:", style="bold")
        for source in result.sources:
            cited = source.n in result.cited
            console.print(source_line(source), style=None if cited else "dim")
    if result.removed_citations:
        warn(f"removed citation(s) of sources that do not exist: {' '.join(result.removed_citations)}")
