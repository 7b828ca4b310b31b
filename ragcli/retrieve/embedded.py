"""A quote from a note that another note embeds, cited where its words are written.

``![[Journal/2026-03-14]]`` in the Lisbon trip note makes the journal's text part of that note
(``ingest.markdown``), so a search for what the trip note shows finds it; those chunks stand at the
embed's one line. "Called Ana about the Lisbon trip: we settled on the second week of May." was
cited as line 21 of Lisbon trip.md, under "Places > 2026-03-14", where the reader finds only the
embed. The embedded note's own chunks hold the same words at their own lines: the quote is cited
there, and shown once when both places were quoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..types import Chunk, Quote

_ANCHOR = 6  # words matched at each end of a quote
_SKIP = 12  # words before it that may not be the note's: a callout's title, an embedded section's heading


def at_their_source(quotes: Sequence[Quote], index) -> list[Quote]:
    """The quotes, each one taken from an embedded note cited at that note's lines (``index``:
    ``file`` and ``note_chunks``), without a second showing of the same words at the same place;
    renumbered 1..n when one goes."""
    out: list[Quote] = []

    def embeds_of(path: str) -> Sequence[str]:
        record = index.file(path)
        return record.embeds if record is not None else ()

    for quote in quotes:
        quote = _at_source(quote, embeds_of, index.note_chunks)
        if not any(q.path == quote.path and q.line_start == quote.line_start and q.text == quote.text for q in out):
            out.append(quote)
    if len(out) == len(quotes) and all(a is b for a, b in zip(out, quotes)):
        return list(quotes)
    # a note's quotes in its reading order, the notes in the order their first quote came
    first = {}
    for k, q in enumerate(out):
        first.setdefault(q.path, k)
    out.sort(key=lambda q: (first[q.path], q.line_start))
    return [replace(q, n=n) for n, q in enumerate(out, 1)]


def _at_source(quote: Quote, embeds_of: Callable[[str], Sequence[str]],
               note_chunks: Callable[[str], Sequence[Chunk]]) -> Quote:
    """Where the quote's words stand in a note its note embeds; the quote itself when none holds
    them, or when it is no embed's (an embed's chunks stand on one line, the embed's). The
    heading an embed of several sections puts before each ("General > Conflict resolution") is
    the embedded note's heading, which the citation now names: it leaves the quote's text."""
    if quote.page is not None or quote.line_start != quote.line_end:
        return quote
    for path in embeds_of(quote.path):
        for chunk in note_chunks(path):
            found = _span(quote.text, chunk.text)
            if found is None:
                continue
            skip, start, end = found
            first = chunk.line_start + chunk.text.count("\n", 0, start)
            last = chunk.line_start + chunk.text.count("\n", 0, end)
            text = quote.text.split(None, skip)[-1] if skip and ">" in quote.text.split()[:skip] else quote.text
            return replace(quote, text=text, path=chunk.path, title=chunk.title, heading=chunk.heading,
                           line_start=first, line_end=max(first, last))
    return quote


def _span(text: str, within: str) -> tuple[int, int, int] | None:
    """Where ``text`` stands in ``within``: how many of its first words are not there (a
    callout's title, an embedded section's heading put before it), and the offsets of its first
    and last words there, read across line breaks."""
    words = text.split()
    for skip in range(min(_SKIP, max(1, len(words) - 2))):  # three words at least, not one anywhere
        head = _find(words[skip:skip + _ANCHOR], within, 0)
        if head is not None:
            tail = _find(words[-_ANCHOR:], within, head.start()) if len(words) - skip > _ANCHOR else head
            return (skip, head.start(), tail.end()) if tail is not None else None
    return None


def _find(words: Sequence[str], within: str, start: int) -> re.Match[str] | None:
    return re.compile(r"\s+".join(map(re.escape, words))).search(within, start) if words else None
