"""The prompt: numbered sources, trimmed to the part that matters, fitted to the budget.

Counting uses the generator's own tokenizer (``Generator.count_tokens``), so the prompt
never overflows the context window: the lowest-ranked sources are dropped first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError
from ..types import Hit
from ..words import query_terms
from .base import Generator, Message

# Kept first and constant: its evaluated KV state is reused across runs (see _PrefixCache).
SYSTEM_PROMPT = (
    "You answer questions using only the numbered sources from the user's notes. "
    "After each fact, cite its source number in square brackets, like [1]. "
    "If the sources do not answer the question, say that the notes do not cover it. "
    "Answer briefly."
)
ANSWER_INSTRUCTION = "Answer in one or two sentences using the sources above, and cite them like [1]."

def source_label(hit: Hit) -> str:
    """`Title › Section › Sub (p. N)`: what introduces a source in the prompt (short: every
    token here is paid for before the first token of the answer)."""
    c = hit.chunk
    title = c.title or Path(c.path).stem
    parts = [p for p in (c.heading.split(" > ") if c.heading else []) if p]
    if parts and parts[0] == title:
        parts = parts[1:]
    label = " › ".join([title, *parts])
    return label + (f" (p. {c.page})" if c.page else "")


def trim_text(text: str, question: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The window of ``text`` (whole lines/sentences) most about the question, within max_tokens.

    A chunk is ~200 embedding tokens; the answer usually sits in a few lines of it. Keeping
    only those keeps the prompt short, which is what time-to-first-token is made of.
    """
    if count(text) <= max_tokens:
        return text
    pieces = [p for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    if not pieces:
        return text
    terms = query_terms(question)
    sizes = [count(p) + 1 for p in pieces]
    scores = [len(terms & query_terms(p)) for p in pieces]
    best, best_score = (0, 0), -1.0
    for start in range(len(pieces)):
        total, score, end = 0, 0.0, start
        while end < len(pieces) and total + sizes[end] <= max_tokens:
            total += sizes[end]
            score += scores[end]
            end += 1
        # prefer more matched terms, then an earlier window (context reads top-down)
        if end > start and score > best_score:
            best, best_score = (start, end), score
    start, end = best
    if end <= start:  # a single piece longer than the budget: cut it by words
        words = pieces[0].split()
        while words and count(" ".join(words)) > max_tokens:
            words = words[: max(1, int(len(words) * 0.8))] if len(words) > 1 else []
        return " ".join(words) + " …"
    out = " ".join(p.strip() for p in pieces[start:end])
    return ("… " if start > 0 else "") + out + (" …" if end < len(pieces) else "")


def user_message(question: str, sources: Sequence[tuple[int, str, str]], context: str = "") -> str:
    """The user turn: numbered sources, then the question (and an earlier one, for follow-ups)."""
    lines = ["Sources:"]
    for n, label, text in sources:
        lines.append(f"[{n}] {label}\n{text}")
    lines.append("")
    if context:
        lines.append(f"Earlier question: {context}")
    lines.append(f"Question: {question}")
    # Repeated at the end: a small model follows what it read last.
    lines.append("")
    lines.append(ANSWER_INSTRUCTION)
    return "\n".join(lines)


def build_messages(question: str, sources: Sequence[tuple[int, str, str]],
                   context: str = "") -> list[Message]:
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(question, sources, context)}]


@dataclass
class Prompt:
    messages: list[Message]
    hits: list[Hit]  # the sources in the prompt, numbered 1..n in this order
    prompt_tokens: int
    max_tokens: int  # room left for the answer (may be less than asked for on a tiny context)


# Per-source and total budgets for source text. ~300 tok/s prompt processing on two cores
# makes every 100 tokens ~0.3 s of waiting before the first token.
SOURCE_TOKENS = 100
CONTEXT_TOKENS = 280
MAX_SOURCES = 3


def fit_prompt(generator: Generator, question: str, hits: Sequence[Hit], *, max_tokens: int,
               context: str = "", source_tokens: int | None = None,
               context_tokens: int | None = None, max_sources: int | None = None) -> Prompt:
    """Build the prompt from the best hits that fit: trim each, drop the lowest-ranked first.

    Counts with the generator's own tokenizer and template, so the prompt plus the reserved
    answer never overflows the context window (llama.cpp would raise on it).
    """
    source_tokens = SOURCE_TOKENS if source_tokens is None else source_tokens
    context_tokens = CONTEXT_TOKENS if context_tokens is None else context_tokens
    max_sources = MAX_SOURCES if max_sources is None else max_sources
    ranked = sorted(hits, key=lambda h: h.rank)[:max_sources]
    count_text = generator.count_text
    n_ctx = generator.n_ctx
    # reserve room for the answer, but never more than half the window
    answer_room = max(16, min(max_tokens, n_ctx // 2))
    trimmed = [(h, trim_text(h.chunk.text, question, source_tokens, count_text)) for h in ranked]
    while True:
        sources = [(i + 1, source_label(h), t) for i, (h, t) in enumerate(trimmed)]
        messages = build_messages(question, sources, context)
        n = generator.count_tokens(messages)
        body = sum(count_text(t) for _, t in trimmed)
        overflow = n + answer_room - n_ctx
        fits = overflow <= 0 and (body <= context_tokens or len(trimmed) <= 1)
        if fits or not trimmed:
            break
        if len(trimmed) > 1:
            trimmed.pop()  # the lowest-ranked source goes first
            continue
        # the best source alone is too long for the window: keep less of it
        hit, text = trimmed[0]
        budget = count_text(text) - max(overflow, 0) - 8
        if budget < 24:
            trimmed.pop()
        else:
            trimmed[0] = (hit, trim_text(hit.chunk.text, question, budget, count_text))
    if n + answer_room > n_ctx:  # even the bare question does not fit: cut the question
        words = question.split()
        while words and n + answer_room > n_ctx:
            words = words[: len(words) * 3 // 4]
            messages = build_messages(" ".join(words), [], "")
            n = generator.count_tokens(messages)
        if n + answer_room > n_ctx:
            raise ModelError(f"the context window ({n_ctx} tokens) is too small for a prompt",
                             hint="Raise it with --ctx (e.g. --ctx 2048).")
    return Prompt(messages, [h for h, _ in trimmed], n, min(max_tokens, n_ctx - n))
