"""How a Markdown table's rows read as quotes: "Method: Espresso; Clicks: 8" when the header names
each cell, the cells joined by " | " otherwise, and the rows of a table whose header the chunk
before holds (a long table is cut between rows)."""

from __future__ import annotations

import re

PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def table_rows(table: list[list[str]], row_lines: list[int]) -> list[tuple[str, int, str]]:
    """Each body row as it reads, with its line and the header row: (text, line, header)."""
    if not table:
        return []
    header = " | ".join(table[0])
    return [(row_text(cells, table[0]), line, header) for cells, line in zip(table[1:], row_lines[1:]) if any(cells)]


def headless_table(content: str) -> bool:
    """Rows of a table whose header is in the chunk before (a long table is cut between rows)."""
    return all(PIPE_ROW.match(ln) for ln in content.split("\n"))


def pipe_cells(line: str) -> list[str]:
    """The cells of one Markdown table line ("| Espresso | 8 |" -> ["Espresso", "8"])."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def loose_rows(content: str) -> list[tuple[str, int]]:
    """The rows of a headless table, each with its line within ``content``; its rule rows dropped."""
    rows = [(k, pipe_cells(line)) for k, line in enumerate(content.split("\n"))]
    return [(" | ".join(cells), k) for k, cells in rows if any(c.strip(" -:") for c in cells)]


def row_text(cells: list[str], names: list[str]) -> str:
    """A row as it reads: "Method: Espresso; Clicks: 8" when the header names every cell."""
    if len(names) == len(cells) and all(names):
        return "; ".join(f"{n}: {c}" for n, c in zip(names, cells) if c)
    return " | ".join(cells)
