"""`rag ask`: an answer from the notes, with numbered sources."""

from __future__ import annotations

from typing import Optional

import typer

from ..app import app
from .options import CTX, GPU, JSON, K, MAX_TOKENS, MIN_SCORE, MODE, MODEL, TEMPERATURE, THREADS


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
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Also list the generated sentences that "
                                 "were left out, and why."),
) -> None:
    """Answer a question from your notes: the quotes that answer it, and a short answer only
    where it adds to them, every sentence checked against them, with numbered citations."""
    from .run import ask

    ask(question, quotes, model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score,
        as_json, verbose)

