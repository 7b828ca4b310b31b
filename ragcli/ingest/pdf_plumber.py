"""A PDF page's tables through pdfplumber: ruled tables from their drawn cells (pdf_ruled.py),
and the words elsewhere on the page as lines of cells at their x positions, for the rules
of tables without ruling lines (pdf_tables.py).

Why pdfplumber (pdfminer.six underneath): it gives public character positions and drawn
cells, where today's pypdf gives them only through its private layout-mode internals. On
the pages of the 20 table questions (bench/compare_table_readers.py) its rows hold the
answer figure for 11 of 20 questions, the pypdf-internals reader's for 4, and on 23 pages no
rule was written on 22 against 13, at a quarter to half its speed on those pages.

pdfminer reads each page a second time (pypdf has read its plain text), at 2-5 times
pypdf's cost, so only pages that may hold a table are read: pages whose content draws a
grid (``draws_rules``) or whose plain text has a line of figures (pdf_tables.looks_tabular).
pdfminer has none of pypdf's limits: it is only given pages pypdf read within its limits,
under the same page alarm and worker memory limit, and any failure costs the rows only.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from . import pdf_ruled, pdf_tables
from .pdf_tables import Cell, mend_cells

# in font heights: a gap under JOIN glues two words into one (a kerned figure "97." "8");
# under CELL it is a word space; wider, a column gap. A word space is about 0.25 of the font
# height.
JOIN = 0.12
CELL = 0.8
SAME_LINE = 0.5  # baselines closer than this (in font heights) are one line
RAISED = 0.25  # a baseline this far above the previous word's (in its font heights): superscript
TOUCH = 1.0  # points two words may share and still sit side by side (a footnote mark after its word)
# a grid is at least two rules each way, or cells drawn as boxes (ruling lines as thin
# rectangles or stroked segments; points)
MIN_RULES, MIN_BOXES, THIN, LONG = 2, 4, 3.0, 6.0
MAX_SCAN = 4 << 20  # bytes of content stream; the text pages measured here stream 0.1-0.2 MB
_NUM = rb"(-?\d*\.?\d+)"
_RECT = re.compile(_NUM + rb"\s+" + _NUM + rb"\s+" + _NUM + rb"\s+" + _NUM + rb"\s+re\b")
_SEGMENT = re.compile(_NUM + rb"\s+" + _NUM + rb"\s+m\s+" + _NUM + rb"\s+" + _NUM + rb"\s+l\b")


def draws_rules(content: bytes) -> bool:
    """Whether a page's content stream draws what a ruled table is made of: two horizontal and
    two vertical rules, or four boxes. A page rule under a running header is one line, so
    plain pages pass only when they draw a frame or a chart (checked on a sample of pdfs-long:
    of 1,150 pages, the 374 where pdfplumber finds a ruled table all pass but 3, and 663 pass).
    A stream over ``MAX_SCAN`` bytes is an image set inline or a drawing, not a table page, and
    scanning it would cost ~0.15 s a MB (an 80 MB inline scan: 0.2 s to read, 19 s with the scan)."""
    if len(content) > MAX_SCAN:
        return False
    across = down = boxes = 0
    for _, _, w, h in _RECT.findall(content):
        w, h = abs(float(w)), abs(float(h))
        across += h < THIN and w > LONG
        down += w < THIN and h > LONG
        boxes += w > LONG and h > LONG
    for x0, y0, x1, y1 in _SEGMENT.findall(content):
        dx, dy = abs(float(x1) - float(x0)), abs(float(y1) - float(y0))
        across += dy < 1 and dx > LONG
        down += dx < 1 and dy > LONG
    return (across >= MIN_RULES and down >= MIN_RULES) or boxes >= MIN_BOXES


class PageTables:
    """The tables of one PDF, page by page (pages in order: a table continued on the next page
    takes its header from the one before). pdfplumber opens the file at the first page asked."""

    def __init__(self, data: bytes):
        self.data = data
        self.pdf = None
        self.header: pdf_ruled.Header | None = None

    def rows(self, n: int, plain: str, content: bytes) -> list[str]:
        """Page ``n``'s table rows as lines ([] when the page holds no table it can read)."""
        ruled, words = draws_rules(content), pdf_tables.looks_tabular(plain)
        if not (ruled or words):
            self.header = None
            return []
        if self.pdf is None:
            import logging

            import pdfplumber

            # pdfminer's notes on a file's syntax would print on stderr; the rows are extra
            logging.getLogger("pdfminer").setLevel(logging.ERROR)
            self.pdf = pdfplumber.open(io.BytesIO(self.data))
        page = self.pdf.pages[n - 1]
        try:
            return self._read(page, ruled, words)
        finally:
            page.close()  # pdfplumber keeps a page's objects until then

    def _read(self, page, ruled: bool, words: bool) -> list[str]:
        rows: list[str] = []
        read: list[tuple[float, float, float, float]] = []  # the boxes of the tables that gave rows
        before = self.header
        self.header = None
        for table in page.find_tables() if ruled else []:
            grid = [[pdf_ruled.Box(box[0], box[2], text or "") if box is not None else None
                     for box, text in zip(row.cells, texts)]
                    for row, texts in zip(table.rows, table.extract())]
            found, self.header = pdf_ruled.table_rows(grid, before)
            before = None  # only the page's first table may continue the previous page's last
            rows.extend(found)
            if found:
                read.append(table.bbox)
        if words:  # a ruled table that gave no rows (columns not drawn) leaves its words to these rules
            rows.extend(pdf_tables.rows_in_lines(page_lines(page, read)))
        return rows

    def close(self) -> None:
        if self.pdf is not None:
            self.pdf.close()


@dataclass(frozen=True)
class Piece:
    """One word on the page: its text and where it sits (points, y upwards)."""

    x0: float
    x1: float
    y: float
    height: float  # the font's size
    text: str


def page_lines(page, outside: list[tuple[float, float, float, float]] = ()) -> list[list[Cell]]:
    """The page's lines, top to bottom, as cells with their x spans, leaving out the words
    within the boxes ``outside`` (ruled tables, read from their cells); an empty list stands
    for a blank line (the distance to the line above, in line heights)."""
    lines: list[list[Cell]] = []
    previous: list[Piece] | None = None
    for line in _lines(pieces(page, outside)):
        if previous is not None:
            gap = min(p.y for p in previous) - max(p.y for p in line)
            height = min(p.height for p in line)
            lines.extend([] for _ in range(max(0, int(gap / height) - 1)))
        lines.append(mend_cells(_cells(line)))
        previous = line
    return lines


def pieces(page, outside=()) -> list[Piece]:
    """Every upright word the page shows (rotated text is left out: its columns are not the
    page's). Words are split where the font size changes (a raised exponent) and at gaps
    wider than a point (a kerned figure is glued back by ``_cells``)."""
    found = []
    for w in page.extract_words(x_tolerance=1, y_tolerance=1, extra_attrs=["size"]):
        middle = ((w["x0"] + w["x1"]) / 2, (w["top"] + w["bottom"]) / 2)
        if not w["upright"] or w["size"] <= 0 or any(_inside(middle, box) for box in outside):
            continue
        found.append(Piece(w["x0"], w["x1"], page.height - w["bottom"], w["size"], w["text"]))
    return found


def _inside(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    x, y = point
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def _lines(found: list[Piece]) -> list[list[Piece]]:
    """Words grouped by baseline, top to bottom, each line left to right.

    Two neighbouring lines less than a font height apart become one when no word of one
    overlaps a word of the other, closest pair first: a cell set midway between the lines
    of its neighbours ("Parameter name" beside "Number of / Values", a default value beside
    a two-line row, a footnote mark raised off its line) is read on one line with them."""
    lines: list[list[Piece]] = []
    for piece in sorted(found, key=lambda p: -p.y):
        line = lines[-1] if lines else None
        if line and line[0].y - piece.y <= SAME_LINE * min(line[0].height, piece.height):
            line.append(piece)
        else:
            lines.append([piece])
    while True:
        pairs = [(_gap(lines[n], lines[n + 1]), n) for n in range(len(lines) - 1)
                 if _joinable(lines[n], lines[n + 1])]
        if not pairs:
            break
        _, n = min(pairs)
        lines[n:n + 2] = [lines[n] + lines[n + 1]]
    return [sorted(line, key=lambda p: p.x0) for line in lines]


def _gap(above: list[Piece], below: list[Piece]) -> float:
    return min(p.y for p in above) - max(p.y for p in below)


def _joinable(above: list[Piece], below: list[Piece]) -> bool:
    height = min(max(p.height for p in above), max(p.height for p in below))
    return (_gap(above, below) < height
            and not any(a.x0 < b.x1 - TOUCH and b.x0 < a.x1 - TOUCH for a in above for b in below))


def _cells(line: list[Piece]) -> list[Cell]:
    """A line's words joined into cells: close words glued, words a space apart into one
    cell, and a wider gap starts the next cell. A smaller word raised after a digit is an
    exponent ("2" "31": 2^31, not 231): it is said with "^", so the cell is no figure."""
    cells: list[Cell] = []
    start = end = 0.0
    text = ""
    last: Piece | None = None
    for piece in line:
        if text and text.endswith(piece.text) and abs(piece.x1 - end) < 0.5:
            continue  # drawn twice (a bold effect): one copy
        gap = piece.x0 - end
        if last and text and gap < CELL * piece.height:
            glue = "" if gap < JOIN * piece.height else " "
            if _raised(piece, last) and text[-1].isdigit():
                glue = "^"
            text, end = text + glue + piece.text, max(end, piece.x1)
        else:
            if text:
                cells.append(Cell(start, end, " ".join(text.split())))
            start, end, text = piece.x0, piece.x1, piece.text
        last = piece
    if text:
        cells.append(Cell(start, end, " ".join(text.split())))
    return cells


def _raised(piece: Piece, before: Piece) -> bool:
    return piece.height < before.height and piece.y - before.y > RAISED * before.height
