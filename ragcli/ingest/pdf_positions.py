"""A PDF page's text as lines of cells at their real x positions, in points.

Layout mode places every fragment on a grid of average character widths, and a line set in
another font lands on a slightly different grid: header lines drift off their columns
(OPM FY 2016, the IRS tax tables) and no value pairs with one header. Here each text-show
operation keeps the x span pypdf computed for it from the font's glyph widths, so a figure
sits under the header cells it sits under on the printed page.

Why not pypdf's ``visitor_text``: it reports a run of text with the position of the run's
start only, and pypdf joins a row's figures drawn in one text object into one run
("92 98 90 97. 8 97.9 ≥90 Met" on OPM FY 2016 page 105), so which figure sits where is lost.
The spans come from the text-state walk behind pypdf's layout mode instead, one entry per
string shown. That walk is internal to pypdf (checked with 7.1): a pypdf that moves it
raises here, and pdf.py then reads the page's rows from layout text as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from .pdf_tables import Cell, mend_cells

# in font heights: a gap under JOIN glues two strings into one word (kerning, a TJ split
# "9" "7." "8"); under CELL it is a word space; wider, a column gap. A word space is about
# 0.25 of the font height; layout mode's column gap is two average characters, about 1.
JOIN = 0.12
CELL = 0.8
SAME_LINE = 0.5  # baselines closer than this (in font heights) are one line
RAISED = 0.25  # a baseline this far above the previous piece's (in its font heights): superscript
TOUCH = 1.0  # points two pieces may share and still sit side by side (a footnote mark after its word)


@dataclass(frozen=True)
class Piece:
    """One string shown on the page: its text and where it sits (points, y upwards)."""

    x0: float
    x1: float
    y: float
    height: float  # the font's height on the page
    text: str


def page_lines(page) -> list[list[Cell]]:
    """The page's lines, top to bottom, as cells with their x spans; an empty list stands
    for a blank line (the distance to the line above, in line heights), as in layout text."""
    lines: list[list[Cell]] = []
    previous: list[Piece] | None = None
    for line in _lines(pieces(page)):
        if previous is not None:
            gap = min(p.y for p in previous) - max(p.y for p in line)
            height = min(p.height for p in line)
            lines.extend([] for _ in range(max(0, int(gap / height) - 1)))
        lines.append(mend_cells(_cells(line)))
        previous = line
    return lines


def pieces(page) -> list[Piece]:
    """Every upright string the page shows, with its x span (rotated text is left out:
    its columns are not the page's)."""
    from pypdf._text_extraction._layout_mode import _fixed_width_page as fixed
    from pypdf._text_extraction._layout_mode._text_state_manager import TextStateManager
    from pypdf.generic import ArrayObject, ContentStream, StreamObject

    contents = page.get("/Contents")
    contents = contents.get_object() if contents is not None else None
    if not isinstance(contents, (ArrayObject, StreamObject)):
        return []
    fonts = page._layout_mode_fonts()
    ops = iter(ContentStream(contents, page.pdf, "bytes").operations)
    state = TextStateManager()
    shown = []
    # the loop of pypdf's text_show_operations, keeping each string instead of each line
    for operands, op in ops:
        if op in (b"BT", b"q"):
            _, strings = fixed.recurse_to_target_op(ops, state, b"ET" if op == b"BT" else b"Q", fonts)
            shown.extend(strings)
        elif op == b"Tf":
            fixed.set_font_operation(state, fonts, operands)
        else:
            state.set_state_param(op, operands)
    return [_trimmed(s.tx, s.displaced_tx, -s.ty if s.flip_vertical else s.ty, s.font_height, s.text)
            for s in shown
            if not s.rotated and s.font.interpretable and s.text.strip() and s.font_height > 0]


def _trimmed(x0: float, x1: float, y: float, height: float, text: str) -> Piece:
    """The piece without its leading and trailing spaces (" 1,338", " Married "): a space
    widens a cell toward its neighbour's column. Its width is taken as the string's average
    character width."""
    width = (x1 - x0) / len(text)
    core = text.strip()
    lead = len(text) - len(text.lstrip())
    return Piece(x0 + lead * width, x0 + (lead + len(core)) * width, y, height, core)


def _lines(found: list[Piece]) -> list[list[Piece]]:
    """Pieces grouped by baseline, top to bottom, each line left to right.

    Two neighbouring lines less than a font height apart become one when no piece of one
    overlaps a piece of the other, closest pair first: a cell set midway between the lines
    of its neighbours ("Parameter name" beside "Number of / Values", a default value beside
    a two-line row, a footnote mark raised off its line) is read on one line with them, as
    layout mode does."""
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
    """A line's pieces joined into cells: close pieces into words, words a space apart into
    one cell, and a wider gap starts the next cell. A smaller piece raised after a digit is
    an exponent ("2" "31": 2^31, not 231): it is said with "^", so the cell is no figure."""
    cells: list[Cell] = []
    start = end = 0.0
    text = ""
    last: Piece | None = None
    for piece in line:
        if text and _same_spot(piece, start, end, text):
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


def _same_spot(piece: Piece, start: float, end: float, text: str) -> bool:
    return text.endswith(piece.text) and abs(piece.x1 - end) < 0.5
