"""What a PDF page adds to the hits before their units are read: its table rows, which come
after the page's text in a chunk a search rarely finds, and for a "why" question the chunk that
follows a hit, where the cause often is (issue 20). Markdown sections are read whole already
(``sections.with_sections``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ..ingest.pdf_tables import MARKER, ROW
from ..types import Chunk, Hit


def with_page_rows(hits: Sequence[Hit], page_chunks: Callable[[str, int], Sequence[Chunk]]) -> list[Hit]:
    """The hits, then the table rows of each PDF page among them that no hit holds, at the rank
    of the page's best hit. A page's rows follow its text (``ingest.pdf``), often in a chunk of
    their own, and one a search rarely finds: a run of labels and figures reads like no
    question, while the page's text, which holds the same table as loose figures, is found
    (the cFE test report: its p. 13 found, its row "Event Services (EVS) — ... Passed: 65"
    not). Only the rows are added, from the chunk's first row on, not the text before them."""
    out = list(hits)
    held = {h.chunk.id for h in hits}
    pages: set[tuple[str, int]] = set()
    for hit in sorted(hits, key=lambda h: h.rank):
        chunk = hit.chunk
        if chunk.page is None or (chunk.path, chunk.page) in pages:
            continue
        pages.add((chunk.path, chunk.page))
        for other in page_chunks(chunk.path, chunk.page):
            rows = _rows_of(other) if other.id not in held else None
            if rows is not None:
                out.append(Hit(rows, hit.score, hit.rank, hit.vector_score, hit.keyword_score))
    return out


FOLLOWING_HITS = 3  # the best hits whose next chunk on the page is read too (for "why")


def with_following(hits: Sequence[Hit], page_chunks: Callable[[str, int], Sequence[Chunk]]) -> list[Hit]:
    """The hits, then for each of the best ``FOLLOWING_HITS`` on a PDF page the page's chunk
    that follows it, at a rank after every hit. A report gives a figure, then its cause in
    the next sentence, and a chunk boundary often falls between them (OPM FY 2016, p. 51: "the
    score remained at 71, most major components improved." ends one chunk, "Gains ... were
    offset by FIS's score" opens the next). Markdown sections are read whole already
    (``sections.with_sections``)."""
    out = list(hits)
    held = {h.chunk.id for h in hits}
    rank = max((h.rank for h in hits), default=0) + 1
    for hit in sorted(hits, key=lambda h: h.rank)[:FOLLOWING_HITS]:
        chunk = hit.chunk
        if chunk.page is None:
            continue
        later = [c for c in page_chunks(chunk.path, chunk.page) if c.line_start > chunk.line_start]
        if later and later[0].id not in held:
            held.add(later[0].id)
            out.append(Hit(later[0], 0.0, rank))
    return out


def _rows_of(chunk: Chunk) -> Chunk | None:
    """The part of a page's chunk that is its table rows (lines kept), or None."""
    lines = chunk.text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip() == MARKER
                  or line.startswith(ROW) and " — " in line), None)
    if first is None:
        return None
    return replace(chunk, text="\n".join(lines[first:]),
                   line_start=min(chunk.line_start + first, max(chunk.line_end, chunk.line_start)))
