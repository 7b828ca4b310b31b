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
    quotes: bool = typer.Option(False, "--quotes", help="Only the evidence: the passages that answer, "
                                "quoted with file and line; no generation."),
    model: Optional[str] = MODEL, temperature: Optional[float] = TEMPERATURE,
    max_tokens: Optional[int] = MAX_TOKENS, ctx: Optional[int] = CTX,
    threads: Optional[int] = THREADS, gpu_layers: Optional[int] = GPU,
    k: Optional[int] = K, mode: Optional[str] = MODE, min_score: Optional[float] = MIN_SCORE,
    as_json: bool = JSON,
) -> None:
    """Answer a question from your notes: the quotes that answer it first, then a short answer
    whose every sentence was checked against them, with numbered citations."""
    from .. import render
    from ..serve.client import daemon_answer

    config = answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    stream = not as_json and sys.stdout.isatty()
    # Warm when `rag watch` runs: printed whole (its quotes and answer arrive together).
    result = None if quotes else daemon_answer(config, question)
    streamed = False
    if result is None:
        from ..pipeline.answer import answer

        require_index(config)
        result = answer(config, question, quotes_only=quotes,
                        on_quotes=print_quotes if stream else None,
                        on_token=stream_to_stdout if stream else None)
        streamed = stream
    if as_json:
        render.print_json(result.to_json())
    else:
        print_answer(result, streamed=streamed)


def stream_to_stdout(piece: str) -> None:
    from ..render import clean

    sys.stdout.write(clean(piece))
    sys.stdout.flush()


def print_quotes(quotes) -> None:
    """The evidence, numbered, before any answer: what the notes say, word for word."""
    from ..render import clean, out

    console = out()
    for q in quotes:
        text = clean(q.text) if q.kind == "code" else " ".join(clean(q.text).split())
        if q.kind == "code":
            console.print(f"[{q.n}]")
            for line in text.splitlines():
                console.print(f"    {line}", style="cyan")
        else:
            console.print(f"[{q.n}] \u201c{text}\u201d", style="cyan")
    if quotes:
        console.print("")


def print_answer(result, *, streamed: bool) -> None:
    """The quotes and the answer (unless they were streamed already), then the sources."""
    from ..render import clean, out, source_line, warn

    console = out()
    if not result.covered:
        console.print(clean(result.text))
        return
    if not streamed:
        print_quotes(result.quotes)
    if result.text:
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
    for notice in result.notices:
        sys.stdout.flush()
        warn(notice)
    if result.dropped:
        sys.stdout.flush()  # the note goes after the sources, not into their last line
        n = len(result.dropped)
        warn(f"{n} generated sentence{'s were' if n > 1 else ' was'} left out: not supported by "
             "the quotes (--json lists them)")
