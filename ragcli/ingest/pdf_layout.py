"""One PDF page → text whose table rows stay on one line.

pypdf's default ("plain") extraction follows the content stream, which for many tables is
column by column: a row's label and its figures end up lines apart ("column soup"), so a
question about a figure cannot find its row. pypdf's "layout" mode places text where it is
printed, row by row; measured on the 20 table questions of bench/questions/pdf_tables.jsonl
it keeps the label and the figure on one line for 17 of them (plain: 9). Layout mode has
three weak spots, each handled here:

- rotated text is left out (a landscape table, a margin note): the lines of the plain
  extraction that layout mode missed are added after the page's text;
- two-column prose comes out interleaved, line by line across the gutter: the columns are
  found and read one after the other, block by block;
- pypdf's layout mode is slow on pages that stack thousands of ``cm`` transforms (the IRS
  tax tables: ~5 s a page instead of ~2 s): those pages, found by a cheap scan of the
  content stream, use plain mode (which keeps such rows together anyway).
"""

from __future__ import annotations

import re
from statistics import median

# Estimated layout work (text operators × the transform stack under them) above which a
# page is read in plain mode. Measured: 2.4M ≈ 5 s in layout mode (≈ 2 s plain); ordinary
# pages, even dense tables, stay under 10k.
LAYOUT_MAX_COST = 500_000
_OPS = re.compile(rb"(?<![^\s\]\)>])(q|Q|cm|Tj|TJ|')(?=[\s\[(</]|$)")
_GAP = re.compile(r" {2,}")
_CELL_GAP = re.compile(r" {3,}")
_WIDE_GAP = re.compile(r" {6,}")
_BLANKS = re.compile(r"\n{3,}")
_WORD = re.compile(r"\w+")


class RotatedText(Exception):
    """Layout mode met rotated text, which it leaves out: the page must be read in plain mode."""


def page_text(page, layout_warnings: list[str]) -> str:
    """The page's text; ``layout_warnings`` collects pypdf's warnings during layout mode."""
    if _layout_cost(page) > LAYOUT_MAX_COST:
        return page.extract_text() or ""
    start = len(layout_warnings)
    text = tidy(page.extract_text(extraction_mode="layout") or "")
    if any(w.startswith("Rotated text") for w in layout_warnings[start:]):
        del layout_warnings[start:]
        text = _with_rotated_lines(text, page.extract_text() or "")
    return text


def _with_rotated_lines(layout: str, plain: str) -> str:
    """Layout mode leaves rotated text out (a margin note, a landscape table): add the lines of
    the plain extraction whose words layout mode did not give."""
    have = set(_WORD.findall(layout))
    extra = []
    for line in plain.split("\n"):
        words = _WORD.findall(line)
        if words and sum(w not in have for w in words) * 2 > len(words):
            extra.append(line.strip())
    if not extra:
        return layout
    return (layout + "\n\n" if layout else "") + "\n".join(extra)


def _layout_cost(page) -> int:
    """Text operators weighted by the depth of ``cm`` transforms they sit under (pypdf's layout
    mode multiplies the whole stack for each one)."""
    from pypdf.generic import ArrayObject

    contents = page.get("/Contents")
    if contents is None:
        return 0
    contents = contents.get_object()
    parts = contents if isinstance(contents, ArrayObject) else [contents]
    total = 0
    for part in parts:
        data = part.get_object().get_data()
        depth, saved = 0, []
        for m in _OPS.finditer(data):
            op = m.group(1)
            if op == b"q":
                saved.append(depth)
            elif op == b"Q":
                depth = saved.pop() if saved else 0
            elif op == b"cm":
                depth += 1
            else:
                total += depth + 1
    return total


# ---------------------------------------------------------------- shaping the text


def tidy(text: str) -> str:
    """Layout text → readable lines: columns read in order, cell gaps kept short."""
    lines = [line.rstrip() for line in text.split("\n")]
    gutter = _gutter(lines)
    if gutter:
        lines = _read_columns(lines, gutter)
    out = [_squeeze(line) for line in lines]
    return _BLANKS.sub("\n\n", "\n".join(out)).strip("\n")


def _squeeze(line: str) -> str:
    """Leading indent dropped; a gap of 3+ spaces (between table cells) becomes 3 spaces, a
    justified double space becomes one."""
    line = line.strip()
    return _GAP.sub(lambda m: "   " if len(m.group(0)) >= 3 else " ", line)


def _gutter(lines: list[str]) -> int | None:
    """The character column between two columns of prose, if the page has them.

    Prose columns are justified: on most lines the left column's text runs to near the
    gutter and the right column's text starts just after it. A table has gaps too, but its
    cells are short, so a table is not mistaken for columns.
    """
    texts = [line for line in lines if line.strip()]
    if len(texts) < 8:
        return None
    width = max(len(line) for line in texts)
    best, best_count = None, 0
    for g in range(int(width * 0.3), int(width * 0.7)):
        count = 0
        for line in texts:
            if len(line) > g + 1 and line[g] == " " and line[g - 1] == " " and line[:g].strip() \
                    and line[g:].strip():
                count += 1
        if count > best_count:
            best, best_count = g, count
    if best is None or best_count < max(6, len(texts) * 0.4):
        return None
    left, right, cells = [], [], 0
    for line in texts:
        if len(line) > best + 1 and line[best] == " " and line[best - 1] == " ":
            lpart, rpart = line[:best].strip(), line[best:].strip()
            if lpart and rpart:
                left.append(len(lpart))
                right.append(len(rpart))
                cells += _cells(lpart) or _cells(rpart)
    # Justified prose fills its column, in one run of words; table rows are cells apart.
    if median(left) < best * 0.6 or median(right) < (width - best) * 0.5 or cells > len(left) * 0.3:
        return None
    return best


def _cells(part: str) -> bool:
    """Does this piece of a line look like table cells (wide gaps) rather than prose? A run-in
    heading or a loose justified line has one gap of 3-5 spaces at most."""
    return bool(_WIDE_GAP.search(part)) or len(_CELL_GAP.findall(part)) >= 2


def _read_columns(lines: list[str], gutter: int) -> list[str]:
    """Lines that span the gutter stay where they are; each run of lines split by it is read
    left column first, then right column."""
    out: list[str] = []
    left: list[str] = []
    right: list[str] = []

    def flush() -> None:
        out.extend(left)
        if left and right:
            out.append("")
        out.extend(right)
        left.clear()
        right.clear()

    for line in lines:
        head, tail = line[:gutter], line[gutter:]
        if len(line) > gutter and line[gutter - 1:gutter + 1] != "  ":
            flush()
            out.append(line)
            continue
        left.append(head.rstrip())
        if tail.strip() or right:
            right.append(tail.strip())
    flush()
    return out
