"""How PDF pages become text: a table's rows on one line, every other page exactly as pypdf's
plain extraction gives it, two columns read in order, rotated text kept. Each PDF is made here, drawn the way real producers draw them (a table column by
column, a margin note rotated), and parsed through the real worker."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.ingest import Parser
from ragcli.ingest.pdf import _clean

from test_ingest_pdf import make_pdf

ROWS = [("Coal power plants", "1,234", "56.7%"), ("Natural gas turbines", "8,901", "23.4%"),
        ("Onshore wind farms", "567", "8.9%"), ("Solar photovoltaic arrays", "2,345", "10.1%")]


def table_page(rows=ROWS, extra: bytes = b"") -> bytes:
    """A table drawn column by column (labels first, then each column of figures), as many
    producers write them: the content stream never holds a row together."""
    ops = [b"BT /F1 10 Tf 1 0 0 1 72 740 Tm (Table 3. Capacity by source) Tj ET"]
    for col, x in enumerate((72, 330, 430)):
        ops.append(b"BT /F1 10 Tf")
        for i, row in enumerate(rows):
            ops.append(f"1 0 0 1 {x} {700 - 16 * i} Tm ({row[col]}) Tj".encode())
        ops.append(b"ET")
    return b"\n".join(ops) + extra


def _plain(data: bytes) -> str:
    import pypdf

    return pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text()


def _row_lines(text: str, rows=ROWS) -> list[str | None]:
    """For each row, the line holding its label and both figures in order (None if none)."""
    found = []
    for label, a, b in rows:
        line = next((ln for ln in text.split("\n") if label in ln and a in ln and b in ln), None)
        ok = line is not None and line.index(label) < line.index(a) < line.index(b)
        found.append(line if ok else None)
    return found


@pytest.fixture
def parser():
    with Parser(load_config()) as p:
        yield p


def test_table_rows_stay_on_one_line(tmp_path: Path, parser: Parser) -> None:
    data = make_pdf([table_page()])
    assert _row_lines(_plain(data)) == [None] * len(ROWS)  # pypdf's plain mode: column soup
    (tmp_path / "table.pdf").write_bytes(data)
    doc = parser.parse(tmp_path / "table.pdf")
    lines = _row_lines(doc.sections[0].text)
    assert all(lines), doc.sections[0].text
    assert "Coal power plants   1,234   56.7%" in lines  # cells three spaces apart


def test_table_rows_stay_in_one_chunk(tmp_path: Path, parser: Parser) -> None:
    from ragcli.ingest.chunk import chunk_document

    (tmp_path / "table.pdf").write_bytes(make_pdf([table_page()]))
    doc = parser.parse(tmp_path / "table.pdf")
    # A small budget forces several chunks: no row may be cut between two of them.
    chunks = chunk_document(doc, lambda text: len(text.split()) + 2, 24, 4)
    assert len(chunks) > 1
    for label, a, b in ROWS:
        assert any(label in c.text and a in c.text and b in c.text for c in chunks), label


def test_a_page_that_is_no_table_keeps_the_plain_text(tmp_path: Path, parser: Parser) -> None:
    # prose with figures in it, and a list of two-cell rows: neither is a table of 3+ cells
    lines = ["In 2019 the survey counted 1,234 farms and 56 mills, 7.5% more than in 2018.",
             "Section 3.2 explains the method; Table 4 on page 12 gives the counts."]
    ops = [b"BT /F1 10 Tf 14 TL 1 0 0 1 72 740 Tm"] + [f"({line}) Tj T*".encode() for line in lines] + [b"ET"]
    for i, (label, figure) in enumerate([("Farms", "1,234"), ("Mills", "56"), ("Bakeries", "78")]):
        ops.append(f"BT /F1 10 Tf 1 0 0 1 72 {680 - 16 * i} Tm ({label}) Tj ET".encode())
        ops.append(f"BT /F1 10 Tf 1 0 0 1 330 {680 - 16 * i} Tm ({figure}) Tj ET".encode())
    data = make_pdf([b"\n".join(ops)])
    (tmp_path / "prose.pdf").write_bytes(data)
    text = parser.parse(tmp_path / "prose.pdf").sections[0].text
    assert text == _clean(_plain(data)), (text, _plain(data))
    assert "   " not in text


def two_column_page(left: list[str], right: list[str]) -> bytes:
    ops = [b"BT /F1 9 Tf 14 TL 1 0 0 1 56 740 Tm"] + [f"({line}) Tj T*".encode() for line in left] + [b"ET"]
    ops += [b"BT /F1 9 Tf 14 TL 1 0 0 1 316 740 Tm"] + [f"({line}) Tj T*".encode() for line in right] + [b"ET"]
    return b"\n".join(ops)


def test_two_columns_are_read_one_after_the_other(tmp_path: Path, parser: Parser) -> None:
    left = [f"left column line {i:02d} says alpha bravo charlie delta" for i in range(14)]
    right = [f"right column line {i:02d} says echo foxtrot golf hotel" for i in range(14)]
    (tmp_path / "paper.pdf").write_bytes(make_pdf([two_column_page(left, right)]))
    text = parser.parse(tmp_path / "paper.pdf").sections[0].text
    lines = [ln for ln in text.split("\n") if ln.strip()]
    assert lines == left + right, text


def test_rotated_margin_note_is_kept_beside_the_table(tmp_path: Path, parser: Parser) -> None:
    note = b"\nBT /F1 8 Tf 0 1 -1 0 580 200 Tm (This publication is available free of charge) Tj ET"
    (tmp_path / "rotated.pdf").write_bytes(make_pdf([table_page(extra=note)]))
    doc = parser.parse(tmp_path / "rotated.pdf")
    text = doc.sections[0].text
    assert all(_row_lines(text)), text
    assert "This publication is available free of charge" in text
    assert not any("Rotated" in w for w in doc.warnings)
