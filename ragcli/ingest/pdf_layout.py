"""One PDF page → text; a table page's rows stay on one line.

pypdf's default ("plain") extraction follows the content stream, which for many tables is
column by column: a row's label and its figures end up lines apart ("column soup"), so a
question about a figure cannot find its row. pypdf's "layout" mode places text where it is
printed, row by row. Layout text is used only where it helps, on pages that look like
tables; every other page keeps the plain text (layout mode on all pages moved the ranking
of prose, such as two-column papers, for the worse). A page looks like a table when its
layout text has rows of three or more cells with a figure among them (``TABLE_ROWS`` of
them) and no gutter between two columns of prose. Layout mode has three weak spots, each
handled here:

- rotated text is left out (a landscape table, a margin note): the lines of the plain
  extraction that layout mode missed are added after the page's text;
- two-column prose comes out interleaved, line by line across the gutter: such a page is
  read in plain mode;
- pypdf's layout mode is slow on pages that stack thousands of ``cm`` transforms (the IRS
  tax tables: ~5 s a page instead of ~2 s): those pages, found by a cheap scan of the
  content stream, use plain mode (which keeps such rows together anyway).

Cells are kept three spaces apart (layout mode pads them to their printed position): the
text stays compact, and the embedder's tokenizer spends nothing on the spaces.
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
_CELL = re.compile(r"\S {3,}(?=\S)")  # a gap between two cells
_FIGURE = re.compile(r"^[$(<>≥≤~±+\-−–]*\d[\d,.:/]*[%)*]*$")  # 12  1,234  $5.6  (7)  71.3%  ≥73%
TABLE_ROWS = 3  # rows of cells a page needs to be read as a table


def page_text(page, layout_warnings: list[str]) -> str:
    """The page's text; ``layout_warnings`` collects pypdf's warnings during layout mode."""
    plain = page.extract_text() or ""
    # A table needs TABLE_ROWS rows with a figure: a page with fewer figures is prose, and
    # skips layout mode (slower than plain mode).
    if sum(1 for w in plain.split() if _FIGURE.match(w)) < TABLE_ROWS or _layout_cost(page) > LAYOUT_MAX_COST:
        return plain
    start = len(layout_warnings)
    layout = page.extract_text(extraction_mode="layout") or ""
    rotated = any(w.startswith("Rotated text") for w in layout_warnings[start:])
    del layout_warnings[start:]
    lines = [line.rstrip() for line in layout.split("\n")]
    if not looks_like_table(lines):
        return plain
    text = _BLANKS.sub("\n\n", "\n".join(_squeeze(line) for line in lines)).strip("\n")
    return _with_rotated_lines(text, plain) if rotated else text


def looks_like_table(lines: list[str]) -> bool:
    """Layout lines of a table page: ``TABLE_ROWS`` rows of 3+ cells holding a figure, and no
    gutter of two-column prose (a paper's page with a table in one column is read plain)."""
    rows = 0
    for line in lines:
        if len(_CELL.findall(line.strip())) >= 2 and any(_FIGURE.match(w) for w in line.split()):
            rows += 1
    return rows >= TABLE_ROWS and _gutter(lines) is None


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
