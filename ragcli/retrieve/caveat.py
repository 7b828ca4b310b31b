"""The caveat beside a yes/no answer: asked "can I put widgets on my iPhone's lock screen?", the
steps that add one answer half of it; the note's callout "Widgets are available on iOS and iPadOS
18 and higher. Widgets are not available when using "Require Face ID"" says when the answer is no.
Read from the note's own lines once the quotes are chosen, as ``beside`` and ``rule_before`` do."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..types import Chunk, Quote
from ..words import asks_whether, query_terms
from .rule_before import section_lines

# What a caveat says: a limit, a condition, a version ("only on Desktop", "not available when ...",
# "don't allow", "requires", "18 and higher", "at the moment")
_LIMIT = re.compile(r"\b(?:only|not|no longer|cannot|unless|requires?|required|at the moment|currently)\b|n't\b|"
                    r"\band (?:higher|later|above|newer)\b", re.I)
_QUOTED = re.compile(r"^\s*>\s?")
MAX_CAVEAT_CHARS = 320
# A caveat is about what was asked when it names a word of the question that few passages use
# (FTS idf): "widgets" 5.1, "embed" 3.7, "domain" 3.9, "window" 2.7; not "Obsidian", "note", "app"
# (2.2), "page" (2.4), which the CLI's "Requires Obsidian 1.12 installer" shares with "Can
# Obsidian read my notes out loud?"
SPECIFIC_IDF = 2.5
# ... or when it opens its note and speaks of the note's subject ("This feature is only available
# on Desktop." at the top of Pop-out windows)
_OF_THE_NOTE = re.compile(r"^(?:this|the) (?:feature|plugin|core plugin|setting|option|integration)\b", re.I)


def with_caveat(quotes: Sequence[Quote], question: str,
                section_chunks: Callable[[str, str], Sequence[Chunk]],
                idf: Callable[[list[str]], dict[str, float]]) -> list[Quote]:
    """For a question asking whether, the first callout of a quote's section that states a limit
    about what was asked and is not quoted already, placed by its line beside that quote: one for
    the answer."""
    if not asks_whether(question):
        return list(quotes)
    asked = sorted(query_terms(question))
    specific = {t for t, v in idf(asked).items() if v >= SPECIFIC_IDF} if asked else set()
    for quote in quotes:
        if quote.page is not None:
            continue
        chunks = section_chunks(quote.path, quote.heading)
        for first, last, body in _callouts(section_lines(quote, chunks)):
            heading = next(c.heading for c in chunks if c.line_start <= first <= c.line_end)
            about = query_terms(body) & specific or _OF_THE_NOTE.match(body) and heading == quote.title
            if about and _LIMIT.search(body) and len(body) <= MAX_CAVEAT_CHARS \
                    and not any(q.path == quote.path and q.line_start <= last and first <= q.line_end for q in quotes):
                caveat = replace(quote, text=body, kind="sentence", line_start=first, line_end=last,
                                 heading=heading)
                return in_place(quotes, caveat)
    return list(quotes)


def in_place(quotes: Sequence[Quote], added: Quote) -> list[Quote]:
    """The quotes with ``added`` (read from its note once the rest were chosen) among that note's
    quotes by line, renumbered."""
    same = [i for i, q in enumerate(quotes) if q.path == added.path]
    place = next((i for i in same if quotes[i].line_start > added.line_end), same[-1] + 1)
    out = [*quotes[:place], added, *quotes[place:]]
    return [replace(q, n=n) for n, q in enumerate(out, 1)]


def _callouts(lines: dict[int, str]) -> list[tuple[int, int, str]]:
    """The section's quoted blocks (callouts) as (first line, last line, text), a title line of a
    word or two ("Note", "Warning") left off."""
    found, run = [], []
    for k in sorted(lines):
        if _QUOTED.match(lines[k]) and (not run or run[-1][0] == k - 1):
            run.append((k, _QUOTED.sub("", lines[k]).strip()))
            continue
        if run:
            found.append(run)
        run = [(k, _QUOTED.sub("", lines[k]).strip())] if _QUOTED.match(lines[k]) else []
    if run:
        found.append(run)
    out = []
    for block in found:
        texts = [(k, t) for k, t in block if t]
        if len(texts) > 1 and len(texts[0][1].split()) <= 2 and not texts[0][1].endswith((".", ":", "?", "!")):
            texts = texts[1:]  # "Note": the callout's title, not what it says
        if texts:
            out.append((texts[0][0], texts[-1][0], " ".join(t for _k, t in texts)))
    return out
