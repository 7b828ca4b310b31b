"""Ruled tables (cells drawn with lines, found by pdfplumber) said as readable lines:
"Row label — Column header: value; ...".

A ruled table's cells are known, so the only guesses are which rows head the columns and
which cell labels a row. The rules, each for any layout:

- a row with one filled cell across the table is a title when it sits above the header
  (the table's name: "PERFORMANCE MEASURE: ..." over a row of results), a group inside the
  body ("Counters and Timers" over the rows it groups), and prose when longer than a title
  (an "Analysis of Results" paragraph drawn in the table's frame): prose ends the group;
- the header is the rows under the titles down to the first row that holds a figure (a
  year alone is a column name, "FY 2016 Results"), at most ``MAX_HEADER_ROWS``; in a table
  with no figures at all, the first row. A header cell is short and is no figure; a table
  whose top row is not a header (a table continued from the previous page) takes the header
  of the table before it when the columns line up, else it gives no rows;
- a value's header is every header cell above it, top to bottom ("Three Months Ended June
  30," over "2024"), found by x: a header cell over the value's middle, or a value over the
  header cell's middle. Two cells of one header row over one value make it a guess: the
  row is left out, since a wrong pairing is worse than none;
- a row's label is its first cell of text (after any numbers before it: a line number); a row
  of figures alone is labelled by the table's title. A group is said before the label. A
  label opening in lower case is the next line of a wrapped row, and two values under one
  header are sub-columns it does not name: such rows are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .pdf_tables import is_figure, is_value, mend_figure

MAX_HEADER_ROWS = 4  # a taller header is more likely a block of text rows than column names
MAX_HEADER_CELL = 60  # characters; longer is a sentence, not a column's name
MAX_TITLE = 200  # characters; a longer cell across the table is a paragraph
FRAME = 3.0  # points: a table continued on the next page starts and ends where the first did
_LETTER = re.compile(r"[^\W\d_]")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_BROKEN = re.compile(r"(?<=[a-z])-\n(?=[a-z])")  # "recognition-\nfocused": keep the hyphen, join


@dataclass(frozen=True)
class Box:
    """One drawn cell: its x span in points and its text as printed (lines kept)."""

    x0: float
    x1: float
    text: str

    @property
    def said(self) -> str:
        return " ".join(_BROKEN.sub("-", self.text).split())

    def heads(self, other: Box) -> bool:
        """Whether this header cell sits over ``other`` (either one's middle within the other)."""
        return (self.x0 <= (other.x0 + other.x1) / 2 <= self.x1
                or other.x0 <= (self.x0 + self.x1) / 2 <= other.x1)


@dataclass
class Header:
    """A table's header rows, kept to head a table continued on the next page."""

    rows: list[list[Box]]
    x0: float  # where the table it headed starts and ends
    x1: float

    def fits(self, x0: float, x1: float) -> bool:
        """Whether a table from ``x0`` to ``x1`` has this header's frame (a column drawn only
        in the header, "Component" over two, does not matter: values find their header by x)."""
        return abs(x0 - self.x0) < FRAME and abs(x1 - self.x1) < FRAME


def table_rows(grid: list[list[Box | None]], before: Header | None = None) -> tuple[list[str], Header | None]:
    """The rows of one ruled table (``grid``: rows of cells, None where a merged cell
    covers) as lines, and its header (or ``before``, when it continued that table)."""
    rows = [[c for c in row if c is not None and c.said] for row in grid]
    boxes = [c for row in grid for c in row if c is not None]
    if not boxes:
        return [], before
    x0, x1 = min(c.x0 for c in boxes), max(c.x1 for c in boxes)
    titles: list[str] = []
    n = 0
    while n < len(rows) and len(rows[n]) <= 1:
        if rows[n] and len(rows[n][0].said) <= MAX_TITLE:
            titles.append(rows[n][0].said)
        n += 1
    header, n = _header(rows, n, x0)
    if header:
        kept = Header(header, x0, x1)
    elif before is not None and before.fits(x0, x1):
        header, kept = before.rows, before
    else:
        return [], before
    lines: list[str] = []
    group = ""
    for row in rows[n:]:
        if len(row) == 1:
            group = row[0].said if _is_group(row[0].said) else ""
            continue
        for split in _split_lines(row):
            line = _line(split, header, titles[-1] if titles else "", group)
            if line:
                lines.append(line)
    return lines, kept


def _header(rows: list[list[Box]], n: int, left: float) -> tuple[list[list[Box]], int]:
    """The header rows from row ``n`` on, and the row the body starts at ([] when the rows
    there cannot be a header). Below the first header row, a row with text in the leftmost
    column is a labelled row of text ("Injury" over "Financial Loss"), not more header."""
    has_figures = any(_holds_figure(row) for row in rows[n:])
    header: list[list[Box]] = []
    labelled = False  # the body starts with a labelled row
    while n < len(rows) and len(header) < MAX_HEADER_ROWS:
        row = rows[n]
        if _holds_figure(row) or not all(_names_a_column(c.said) for c in row):
            break
        if header and row[0].x0 - left < FRAME:
            labelled = True
            break
        header.append(row)
        n += 1
        if not has_figures:
            break  # a table of text: its first row heads it
    if not header or not any(len(row) >= 2 for row in header) or n >= len(rows):
        return [], n
    if has_figures and not labelled and not _holds_figure(rows[n]):
        return [], n  # the header ran into long text, not into the figures
    return header, n


def _names_a_column(text: str) -> bool:
    return len(text) <= MAX_HEADER_CELL and not (is_figure(text) and not _YEAR.search(text))


def _holds_figure(row: list[Box]) -> bool:
    """A cell that is a figure other than a year: a row of data, not of column names."""
    return any(is_figure(mend_figure(c.said)) and not _YEAR.fullmatch(c.said) for c in row)


def _split_lines(row: list[Box]) -> list[list[Box]]:
    """A row whose cells all hold the same number of lines (2 or more) is that many rows set
    in one ruled band (a register map: numbers, names and descriptions line by line)."""
    counts = {len(c.text.strip().splitlines()) for c in row}
    if len(counts) != 1 or (k := counts.pop()) < 2:
        return [row]
    parts = [c.text.strip().splitlines() for c in row]
    return [[Box(c.x0, c.x1, part[i]) for c, part in zip(row, parts)] for i in range(k)]


def _line(row: list[Box], header: list[list[Box]], title: str, group: str) -> str:
    """"Group: label — header: value; ..." for one row, or "" when a value's header is a guess."""
    at = _label_at(row)
    label = row[at].said if at is not None else title
    if label[:1].islower():
        return ""  # a wrapped row's next line ("after a period of inactivity."): not a row of its own
    values = [c for i, c in enumerate(row) if i != at]
    said: list[str] = []
    for value in values:
        names: list[str] = []
        for header_row in header:
            over = [h for h in header_row if h.heads(value)]
            if len(over) > 1:
                return ""
            if over and over[0].said not in names:
                names.append(over[0].said)
        name = " ".join(names)
        if name and any(part.startswith(name + ": ") for part in said):
            return ""  # two values under one header: sub-columns the header does not name
        text = mend_figure(value.said)
        said.append(f"{name}: {text}" if name else text)
    if not said:
        return ""
    label = f"{group}: {label}" if group and label else (label or group)
    return f"{label} — " * bool(label) + "; ".join(said)


def _is_group(text: str) -> bool:
    """A cell across the table that names the rows below it ("Counters and Timers", "Revenue:"):
    short, opening with a capital or a figure, not ending like a piece of a sentence."""
    return len(text) <= MAX_HEADER_CELL and not text[:1].islower() and not text.endswith((".", ",", ";"))


def _label_at(row: list[Box]) -> int | None:
    """Where the row's label is: its first cell of text, after any numbers before it (a line
    or item number: "2.5.001", "45" "#110"); None for a row of figures. Text is two letters
    or more ("cES1324", "0xC02"), and not a placeholder ("N/A*": a value missing)."""
    for i, cell in enumerate(row[:-1]):
        if len(_LETTER.findall(cell.said)) >= 2:
            return None if is_value(cell.said) else i
    return None
