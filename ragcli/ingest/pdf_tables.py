"""Table rows of a PDF page without ruling lines, said as readable lines: "Row label —
Header: value; ...".

pypdf's plain text turns a table into column soup (header cells one per line, then a bare
row of figures), so nothing says which header a figure belongs to. Placed at their x
positions (pdf_plumber.py: pdfplumber's public character positions, in points) the cells
are enough to pair a figure with the header cells above it. Tables drawn with ruling lines
are read from their drawn cells instead (pdf_ruled.py); these rules read the rest. The
lines are only appended after the page's plain text (layout mode hurt two-column papers
as page text, see pdf.py).

The answer may only say what the cited text says, so a wrong pairing is worse than none:
a row is emitted only when every value in it pairs with exactly one header column, and a
header column is claimed by one value only; anything else leaves the row out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = "Table rows:"
ROW = "- "  # each row a Markdown list item (see append_rows)
MAX_HEADER_LINES = 8  # a header taller than this is more likely text than headers
MAX_HEADER_BLANKS = 3  # blank lines in a row that may sit inside a header or under it
MAX_HEADER_CELL = 40  # characters; a longer cell is a sentence or a title, not a column name
MAX_GAP_LINES = 6  # lines of wrapped labels (or blank) a table may hold between rows

# a figure: 1,234 / (12.5) / -3 / 45% / $1.2 / ≥80 / 1.2e-3, with an optional footnote mark;
# not "16," (a date or a count in a sentence: it made every page of a statute look tabular)
_NUMBER = re.compile(r"^[(\[]?[-−–+]?[$€£]?[≥≤<>~]?[-−–+]?\d(?:[\d,]*\d)?(?:\.\d+)?(?:[eE][-+]?\d+)?%?[)\]]?\*?$")
_PLACEHOLDER = re.compile(r"^(?:[-−–—*]|n/?a|N/?A|NA|--|\.\.\.|…)\**$")
_YEAR = re.compile(r"^(?:FY ?)?(?:19|20)\d\d[A-Za-z]?$")
_SPACE_DOT = re.compile(r"(?<=\d) \.(?=\d)")
_DOT_SPACE = re.compile(r"(\d)\. (\d)")
_DIGIT = re.compile(r"\d")
_FIGURE_START = re.compile(r"^[(\[]?[-−–+]?[$€£]?\d")
_HYPHEN_BREAK = re.compile(r"(?<=[a-z])- (?=[a-z])")  # "sepa- rately": a word broken over lines
_CURRENCY = {"$", "€", "£"}


@dataclass(frozen=True)
class Cell:
    start: float  # x in points where the text starts
    end: float  # x where the text ends
    text: str

    def overlaps(self, other: Cell) -> bool:
        return self.start < other.end and other.start < self.end


def looks_tabular(plain: str) -> bool:
    """Cheap test on the plain text: a line with 3+ figures that are most of its words. Only
    such pages pay for reading positions outside ruled tables."""
    for line in plain.splitlines():
        words = line.split()
        if len(words) < 3:
            continue
        figures = sum(1 for w in words if _NUMBER.match(w))
        if figures >= 3 and figures * 2 >= len(words):
            return True
    return False


def rows_in_lines(lines: list[list[Cell]]) -> list[str]:
    """Readable lines for the table rows found in a page's lines of cells, top to bottom
    (an empty line is a blank one), as placed by pdf_plumber.page_lines."""
    rows: list[str] = []
    for first, last in _blocks(lines):
        header = _header(lines, first)
        columns = _columns(header) if header else None
        if not columns:
            continue  # no header above, or an ambiguous one: nothing to pair the figures with
        data = [lines[n] for n in range(first, last + 1) if _is_data(lines[n])]
        # Only the fullest rows: a sparse row (a section's opening figure, a subtotal with
        # empty cells) has fewer values than columns, and a figure between two columns
        # can then overlap the wrong one; in a full row every column is taken in order.
        full = max(len(_split_label(cells)[1]) for cells in data)
        paired = [row for cells in data if len(_split_label(cells)[1]) == full
                  for row in _pair(cells, header, columns)]
        # a table printed in blocks across the page is read block by block, as it is meant
        rows.extend(text for _, text in sorted(paired, key=lambda row: row[0]))
    return rows


def append_rows(plain: str, rows: list[str]) -> str:
    """The page text with the rows after it: plain text untouched, so line-numbered
    citations of the page stay valid. Each row is a list item: the evidence reads a chunk as
    Markdown, and lines of one paragraph would be one run-on sentence of many rows; an item
    is quoted on its own."""
    if not rows:
        return plain
    return plain.rstrip("\n") + "\n\n" + MARKER + "\n" + "\n".join(ROW + row for row in rows)


def mend_cells(cells: list[Cell]) -> list[Cell]:
    """Figures mended (see mend_figure), and a currency sign set apart from its figure
    ("$      1,234") joined to it: it belongs to the figure."""
    cells = [Cell(c.start, c.end, mend_figure(c.text)) for c in cells]
    merged: list[Cell] = []
    for cell in cells:
        if merged and merged[-1].text in _CURRENCY:
            sign = merged.pop()
            cell = Cell(sign.start, cell.end, sign.text + cell.text)
        merged.append(cell)
    return merged


def mend_figure(text: str) -> str:
    """Undo the space a kerned figure reads with ("100 .00%", "2 .5 .001", "97. 8", in plain
    text and in words split at a wide kern): a space before a decimal point never occurs in prose, and one after it is
    mended only when the whole cell then reads as a figure."""
    text = _SPACE_DOT.sub(".", text)
    mended = _DOT_SPACE.sub(r"\1.\2", text)
    return mended if _NUMBER.match(mended) else text


def is_figure(text: str) -> bool:
    return bool(_NUMBER.match(text))


def is_value(text: str) -> bool:
    return bool(_NUMBER.match(text) or _PLACEHOLDER.match(text))


def _has_figure(cells: list[Cell]) -> bool:
    """A cell that is a figure other than a year ("2021", "FY 2016" head columns)."""
    return any(_NUMBER.match(c.text) and not _YEAR.match(c.text) for c in cells)


def _opens_with_figure(text: str) -> bool:
    """A cell that opens with a figure other than a year: a value, or an expression of figures
    ("2^31 − 1"), never a column's name."""
    return bool(_FIGURE_START.match(text)) and not _YEAR.match(text)


def _is_year_header(cells: list[Cell]) -> bool:
    """A line of years only ("2021   2020   2019") heads the columns; it is not a row."""
    return len(cells) >= 2 and all(_YEAR.match(c.text) for c in cells)


def _split_label(cells: list[Cell]) -> tuple[str, list[Cell]]:
    """(row label, value cells): the leading text cells are the label (a label wrapped over
    several lines can put its middle line in a second column, beside the figures)."""
    n = 0
    while n < len(cells) and not is_value(cells[n].text):
        n += 1
    return " ".join(c.text for c in cells[:n]), cells[n:]


def _is_data(cells: list[Cell]) -> bool:
    """3+ cells, mostly figures after the label."""
    if len(cells) < 3 or _is_year_header(cells):
        return False
    _, values = _split_label(cells)
    figures = sum(1 for c in values if _NUMBER.match(c.text))
    placeholders = sum(1 for c in values if _PLACEHOLDER.match(c.text))
    return figures >= 2 and (figures + placeholders) * 3 >= len(values) * 2


def _blocks(lines: list[list[Cell]]) -> list[tuple[int, int]]:
    """(first, last) data-row line numbers of each table: data rows with at most a few
    lines between them that only continue the rows' labels (blank, or text left of the
    figures: a wrapped description). Any other line ends the table, so a second table's
    header is never read as rows of the first."""
    blocks: list[tuple[int, int]] = []
    first = last = None
    figures_from = 0  # the column where the last row's figures start
    for n, cells in enumerate(lines):
        if _is_data(cells):
            if first is not None and n - last > MAX_GAP_LINES + 1:
                blocks.append((first, last))
                first = None
            if first is None:
                first = n
            last = n
            figures_from = _split_label(cells)[1][0].start
        elif first is not None and not _continues_labels(cells, figures_from):
            blocks.append((first, last))
            first = None
    if first is not None:
        blocks.append((first, last))
    return blocks


def _continues_labels(cells: list[Cell], figures_from: int) -> bool:
    """A line that may sit between a table's rows: blank, or text with no figure, all left
    of where the rows' figures start (a label or description wrapped onto more lines)."""
    return not _has_figure(cells) and all(c.end <= figures_from for c in cells)


def _header(lines: list[list[Cell]], first: int) -> list[tuple[int, list[Cell]]]:
    """The header lines above a table's first data row, top to bottom, each with its line
    number: the non-blank lines above it (runs of up to two blank lines skipped: a tax table
    sets "Your tax is—" apart from its column names), up to the first line that is a row,
    prose or a title. Single-cell lines at the top are dropped: that is a caption, and
    naming a figure by it is a guess, unless the cell sits right over one cell below (the
    first line of a column's name). A single-cell line inside ("Not Met" under "Target")
    stays."""
    header: list[tuple[int, list[Cell]]] = []
    n, blanks = first - 1, 0
    while n >= 0 and len(header) < MAX_HEADER_LINES:
        cells = lines[n]
        if not cells:
            blanks += 1
            if blanks > MAX_HEADER_BLANKS:
                break
        elif _has_figure(cells) or any(_opens_with_figure(c.text) or len(c.text) > MAX_HEADER_CELL
                                       or ": " in c.text or c.text.endswith(":") for c in cells):
            break  # figures make a row ("2^31 − 1" too); a long cell, or "Measure: ...", a title
        else:
            blanks = 0
            header.append((n, cells))
        n -= 1
    header.reverse()
    while header and len(header[0][1]) < 2 and not _heads_one_cell(header):
        header.pop(0)
    return header


def _heads_one_cell(header: list[tuple[int, list[Cell]]]) -> bool:
    """The single cell of the top header line is the first line of one column's name ("FY
    2022" over "Target" over "Met/"): it sits right above exactly one cell of the next line,
    a line of several cells (not a measure's name under "PERFORMANCE MEASURE:")."""
    (n, (top, *_)), (below_n, below) = header[0], header[1] if len(header) > 1 else (-1, [])
    return below_n == n + 1 and len(below) > 1 and len([c for c in below if c.overlaps(top)]) == 1


def _stacks(header: list[tuple[int, list[Cell]]]) -> dict[tuple[int, int], str]:
    """The whole text of the header each cell is a line of, keyed by (header line, cell):
    a header wrapped over lines ("If line 43" / "(taxable" / "income) is—") is said whole
    wherever one of its lines sits over a column. Cells on adjacent lines (no blank between)
    are one header only when each overlaps the other alone; anything else stays apart."""
    above: dict[tuple[int, int], tuple[int, int]] = {}
    for i in range(1, len(header)):
        (top_n, top), (n, line) = header[i - 1], header[i]
        if n != top_n + 1:
            continue
        for j, cell in enumerate(line):
            over = [k for k, c in enumerate(top) if c.overlaps(cell)]
            if len(over) == 1 and [c for c in line if c.overlaps(top[over[0]])] == [cell]:
                above[(i, j)] = (i - 1, over[0])
    chains: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i, (_, line) in enumerate(header):
        for j in range(len(line)):
            top = (i, j)
            while top in above:
                top = above[top]
            chains.setdefault(top, []).append((i, j))
    text = {}
    for chain in chains.values():
        said = _HYPHEN_BREAK.sub("", " ".join(header[i][1][j].text for i, j in chain))
        text.update(dict.fromkeys(chain, said))
    return text


def _columns(header: list[tuple[int, list[Cell]]]) -> list[Cell] | None:
    """The table's columns, left to right, each as its x span and its name (every header over
    it, top to bottom); None when the header is ambiguous.

    The cells of the fullest header line are columns. A header that sits over none of them
    (a column whose name is set higher or lower than the others: "FY 2022 / Target / Met/ /
    Not Met" beside one-line names) is a column too, made of the cells over one another
    there; two cells of one line among them leave the table out. Two cells of one line over
    one column leave it out as well: which one heads it is a guess. A header over several
    columns (a spanning header above) names each of them."""
    lines = [line for _, line in header]
    fullest = max(lines, key=len)
    spans = list(fullest)
    orphans = [(i, c) for i, line in enumerate(lines) if line is not fullest for c in line
               if not any(c.overlaps(f) for f in fullest)]
    for group in _overlapping(orphans):
        if len({i for i, _ in group}) < len(group):
            return None  # two cells of one line in one stack: not one column
        spans.append(Cell(min(c.start for _, c in group), max(c.end for _, c in group), ""))
    stacks = _stacks(header)
    columns = []
    for span in sorted(spans, key=lambda c: c.start):
        said: list[str] = []
        for i, line in enumerate(lines):
            over = [j for j, c in enumerate(line) if c.overlaps(span)]
            if len(over) > 1:
                return None
            if over and stacks[(i, over[0])] not in said:
                said.append(stacks[(i, over[0])])
        columns.append(Cell(span.start, span.end, " ".join(said)))
    return columns


def _overlapping(cells: list[tuple[int, Cell]]) -> list[list[tuple[int, Cell]]]:
    """The cells in groups that overlap one another in x, directly or through others."""
    groups: list[list[tuple[int, Cell]]] = []
    for found in sorted(cells, key=lambda found: found[1].start):
        if groups and any(found[1].overlaps(c) for _, c in groups[-1]):
            groups[-1].append(found)
        else:
            groups.append([found])
    return groups


def _period(names: list[str]) -> int:
    """How many columns one table has when the same header repeats side by side (a tax table
    printed in three blocks across the page): each block's values make a row of their own."""
    for k in range(2, len(names)):
        if len(names) % k == 0 and all(names[i] == names[i - k] for i in range(k, len(names))):
            return k
    return len(names)


def _is_phrase(text: str) -> bool:
    """Words that are part of a sentence, not a value ("Met", "albedo.day"): more than two,
    or two opening in lower case ("academic institutions,")."""
    words = text.split()
    return len(words) > 2 or (len(words) == 2 and text[:1].islower())


def _unqualified(names: list[str]) -> bool:
    """Two columns of one name, or one whose name ends another's: a spanning header set over
    only some of the columns it heads ("XSum" centred over "R2" of "R1 R2 RL")."""
    return len(set(names)) < len(names) or any(
        a != b and a.endswith(" " + b) for a in names for b in names)


def _is_prose(text: str) -> bool:
    """A line of running text: a hyphenated line break, or 4+ words opening in lower case
    (a two-column paper's text column beside a table)."""
    return text.endswith("-") or (text[:1].islower() and len(text.split()) >= 4)


def _pair(cells: list[Cell], header: list[tuple[int, list[Cell]]],
          columns: list[Cell]) -> list[tuple[int, str]]:
    """(block, "Label — Header: value; ...") for each side-by-side block of a repeated header
    (one block if it does not repeat), or nothing when any value cannot be paired unambiguously.

    Each value must sit under exactly one column (see _columns), and no two values under the
    same one. Layout mode places lines of different fonts on slightly different character
    grids, so a value can drift under a neighbour's cell on some other header line; requiring
    one-to-one columns catches that (a row with more values than columns is left out).
    A value that overlaps two cells of any header line straddles them: the row is left out."""
    label, values = _split_label(cells)
    if len(values) < len(cells) - 1 and _is_prose(cells[0].text):
        return []  # a column of running text beside the table: it is not the row's label
    if not all(c.text.isprintable() for c in cells):
        return []  # a glyph with no text ("\x13" for a check mark): the row's meaning is unknown
    if any(not is_value(v.text) and _DIGIT.search(v.text) for v in values):
        return []  # two figures run together ("2.8%30.6%"): their columns are unknown
    if any(not is_value(v.text) and _is_phrase(v.text) for v in values):
        return []  # a phrase among the figures: a label wrapped past its first cell ("1.01")
    if any(_opens_with_figure(c.text) for c in cells[1:len(cells) - len(values)]):
        return []  # figures the label swallowed ("84.1/90.9"): their columns are unknown
    names = [c.text for c in columns]
    period = len(columns) if label else _period(names)
    if any(_unqualified(names[n:n + period]) for n in range(0, len(names), period)):
        return []  # "R1" beside "CNN/DailyMail R1": which R1 the bare one is, is a guess
    previous = -1
    parts: dict[int, list[str]] = {}
    for value in values:
        under = [i for i, c in enumerate(columns) if c.overlaps(value)]
        if len(under) != 1 or under[0] <= previous:
            return []  # no column, two columns, or out of order (another value's column)
        if any(len([c for c in line if c.overlaps(value)]) > 1 for _, line in header):
            return []  # the value straddles two header cells
        previous = under[0]
        parts.setdefault(under[0] // period, []).append(f"{columns[under[0]].text}: {value.text}")
    return [(block, f"{label} — " * bool(label) + "; ".join(said)) for block, said in parts.items()]
