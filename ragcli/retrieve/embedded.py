"""A quote from a note that another note embeds, cited where its words are written.

``![[Journal/2026-03-14]]`` in the Lisbon trip note makes the journal's text part of that note
(``ingest.markdown``), so a search for what the trip note shows finds it; those chunks stand at the
embed's one line. "Called Ana about the Lisbon trip: we settled on the second week of May." was
cited as line 21 of Lisbon trip.md, under "Places > 2026-03-14", where the reader finds only the
embed. The embedded note's own chunks hold the same words at their own lines: the quote is cited
there, and shown once when both places were quoted.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import PurePath

from ..types import Chunk, Quote
from .evidence import Evidence, quote_place

_ANCHOR = 6  # words matched at each end of a quote
_SKIP = 24  # words before it that may not be the note's: a callout's title, an embedded section's heading


def evidence_at_source(evidence: Evidence, index) -> Evidence:
    """The evidence with its quotes ``at_their_source``, and the places of its parts' and padding
    quotes moved with them, before any rule reads the lines around a quote: read at the embed's
    line, a lead-in ("... in the following regional locations:") was completed with the next
    embed's text."""
    quotes, moved = at_their_source(evidence.quotes, index)
    if quotes is evidence.quotes:
        return evidence
    return replace(evidence, quotes=quotes, part_places=[moved.get(p, p) for p in evidence.part_places],
                   padding_place=moved.get(evidence.padding_place, evidence.padding_place))


def at_their_source(quotes: list[Quote], index) -> tuple[list[Quote], dict[tuple, tuple]]:
    """The quotes, each one taken from an embedded note cited at that note's lines (``index``:
    ``file`` and ``note_chunks``), without a second showing of the same words at the same place,
    renumbered 1..n; and where each quote moved from, to. The quotes themselves when none moved."""
    @functools.cache  # each quote asks twice, most quotes of one note
    def embeds_of(path: str) -> Sequence[str]:
        record = index.file(path)
        return record.embeds if record is not None else ()

    moved, out = {}, []
    for quote in quotes:
        if _names_an_embed(quote, embeds_of(quote.path)):
            moved[quote_place(quote)] = None  # the embed's line as it reads: its note's name
            continue
        there = _at_source(quote, embeds_of, index.note_chunks)
        if there is not quote:
            moved[quote_place(quote)] = quote_place(there)
        if not any(q.path == there.path and q.line_start == there.line_start and q.text == there.text for q in out):
            out.append(there)
    if not moved:
        return quotes, moved
    # a note's quotes in its reading order, the notes in the order their first quote came
    first: dict[str, int] = {}
    for k, q in enumerate(out):
        first.setdefault(q.path, k)
    out.sort(key=lambda q: (first[q.path], q.line_start))
    return [replace(q, n=n) for n, q in enumerate(out, 1)], moved


def _names_an_embed(quote: Quote, embeds: Sequence[str]) -> bool:
    """Is the quote only the name of a note its note embeds ("Security and privacy" for
    ``![[Obsidian Sync/Security and privacy#^sync-geo-regions]]``), which says nothing alone?"""
    return quote.page is None and any(quote.text.strip() == PurePath(path).stem for path in embeds)


def _at_source(quote: Quote, embeds_of: Callable[[str], Sequence[str]],
               note_chunks: Callable[[str], Sequence[Chunk]]) -> Quote:
    """Where the quote's words stand in a note its note embeds; the quote itself when none holds
    them. The
    heading an embed of several sections puts before each ("General > Conflict resolution") is
    the embedded note's heading, which the citation now names: it leaves the quote's text."""
    if quote.page is not None:
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
    for skip in range(min(_SKIP, max(1, len(words) - _ANCHOR + 1))):  # six words at least, not one anywhere
        head = _find(words[skip:skip + _ANCHOR], within, 0)
        if head is None:
            continue
        if len(words) - skip <= _ANCHOR:
            return skip, head.start(), head.end()
        # its last words, or fewer of them where a block's fence stands between ("pattern:" ``` ...)
        tail = _find(words[-_ANCHOR:], within, head.start()) or _find(words[-3:], within, head.start())
        return (skip, head.start(), tail.end()) if tail is not None else None
    return None


def _find(words: Sequence[str], within: str, start: int) -> re.Match[str] | None:
    """The words in order, across line breaks and a callout's "> " at a line's start."""
    return re.compile(r"\s+(?:>\s*)*".join(map(re.escape, words))).search(within, start) if words else None
