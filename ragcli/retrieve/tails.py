"""Chunks read for evidence as their notes have them, the words a chunk repeats from the one
before it included.

The chunker opens each piece of a long section with the last words of the piece before it
(``ingest.chunk._tail``), so that a passage cut in two still embeds with its lead. Those words
are joined by single spaces from wherever they stood: the middle of a sentence, across a code
fence or a list. Quoted, they are not the note's text ("will not be bold\\*\\* ```markdown
\\*\\*This line will not be bold\\*\\* ```", "to go to that note. Another way to navigate ...")
and the line they claim is the last line of the words before. The piece before holds them as
the note has them: evidence reads each such chunk with its opening taken from there instead,
from the start of the block the tail began in, with its lines. The tail still leads the
passage (it is often what made the search find it), now as the note says it.

A tail of whole lines (the items a list's next piece repeats) is the note's text: kept.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence

from ..types import Chunk, Hit

MAX_TAIL_WORDS = 400  # more than any overlap a chunk size allows (the tail fits in a fourth of it)


def tail_length(before: str, text: str) -> int:
    """How many characters of ``text`` open with the last words of ``before``, joined by spaces
    as the chunker joins a tail; 0 when it opens otherwise, or with ``before``'s whole last lines
    (a table's rows, a list's items: the note's own text). One word alike is no tail: a table
    row opens and ends with "|"."""
    lines = before.split("\n")
    if any(_opens_with(text, "\n".join(lines[-k:])) for k in range(1, len(lines) + 1)):
        return 0
    words = before.split()
    for k in range(min(len(words), MAX_TAIL_WORDS), 1, -1):
        tail = " ".join(words[-k:])
        if _opens_with(text, tail) or _opens_with(text, tail, " "):
            return len(tail)
    return 0


def _opens_with(text: str, head: str, then: str = "\n") -> bool:
    """Does ``text`` open with ``head``, then ``then`` or nothing more?"""
    return text.startswith(head) and text[len(head):len(head) + 1] in ("", then)


def untailed(chunks: Sequence[Chunk]) -> list[Chunk]:
    """A section's chunks, in order (``section_chunks``), each opening as the note has it where
    it repeats the last words of the one before it under the same heading, on the same page."""
    out: list[Chunk] = []
    before: dict[tuple[str, int | None], Chunk] = {}
    for chunk in chunks:
        key = (chunk.heading, chunk.page)
        prev = before.get(key)
        before[key] = chunk
        cut = tail_length(prev.text, chunk.text) if _follows(prev, chunk) else 0
        out.append(_restored(prev, chunk, cut) if cut else chunk)
    return out


def _follows(prev: Chunk | None, chunk: Chunk) -> bool:
    """Is ``prev`` the piece before ``chunk`` in a Markdown note? A PDF page's lines are where its
    layout broke the text, so its tails, words of running prose, read as they did."""
    return prev is not None and chunk.page is None  # section_chunks come in ordinal order


def _restored(prev: Chunk, chunk: Chunk, cut: int) -> Chunk:
    """``chunk`` with its first ``cut`` characters (the tail) replaced by ``prev``'s own text from
    the start of the block the tail begins in (a paragraph, a list item, a code block, a callout:
    a code fence opened before it is still open), its first line moved up to match. Lines are
    counted back from ``prev``'s last; where they are more than its span (an embedded note's
    lines stand on the one line that embeds it), the chunk is read as it is."""
    words = chunk.text[:cut].split()
    begins = list(re.finditer(r"\S+", prev.text))[-len(words)].start()
    first = _block_start(prev.text, prev.text.count("\n", 0, begins))
    start = sum(len(line) + 1 for line in prev.text.split("\n")[:first])
    up = prev.text.count("\n", start)
    if prev.line_end - up < prev.line_start:
        return chunk
    return dataclasses.replace(chunk, text=prev.text[start:] + chunk.text[cut:], line_start=prev.line_end - up)


def _block_start(text: str, line: int) -> int:
    """The first line of the innermost list item, or else of the outermost block, holding ``line``."""
    from .units import markdown_blocks  # markdown-it and the answer side's words: only for a chunk with a tail

    start = 0
    for tok in markdown_blocks(text):
        if tok.map and tok.nesting >= 0 and tok.map[0] <= line < tok.map[1] \
                and (tok.level == 0 or tok.type == "list_item_open"):
            start = tok.map[0]
    return start


def sections_as_read(index) -> Callable[[str, str], list[Chunk]]:
    """``index.section_chunks`` as evidence reads them (``untailed``), each section read once."""
    return functools.lru_cache(maxsize=None)(lambda path, heading: untailed(index.section_chunks(path, heading)))


def as_read(chunk: Chunk, section_chunks: Callable[[str, str], Sequence[Chunk]]) -> Chunk:
    """``chunk`` as evidence reads it: as ``section_chunks`` (``untailed`` chunks) holds it. A PDF's
    chunks are read as they are (``_follows``): its section, the whole report, is not read for that."""
    if chunk.page is not None:
        return chunk
    return next((c for c in section_chunks(chunk.path, chunk.heading) if c.id == chunk.id), chunk)


def untailed_hits(hits: Sequence[Hit], section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Hit]:
    """The hits, each chunk read as ``untailed`` reads it in its section."""
    out = []
    for hit in hits:
        read = as_read(hit.chunk, section_chunks)
        out.append(hit if read.text == hit.chunk.text else dataclasses.replace(hit, chunk=read))
    return out
