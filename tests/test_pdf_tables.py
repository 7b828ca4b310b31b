"""Table rows of PDF pages said as "label — header: value" lines: ruled tables from their
drawn cells (ragcli/ingest/pdf_ruled.py), other tables from word positions
(ragcli/ingest/pdf_tables.py), both read through pdfplumber (ragcli/ingest/pdf_plumber.py).

The pairings asserted on real PDFs were checked by eye against the printed page (pdfplumber's
cells of it). A wrong pairing is worse than none, so tables whose header is a guess are
asserted to get no rows at all.
"""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

from ragcli.ingest.pdf import parse_pdf
from ragcli.ingest.pdf_ruled import Box, table_rows
from ragcli.ingest.pdf_tables import MARKER, ROW, Cell, mend_cells, rows_in_lines

from conftest import CORPORA, PDFS  # the paths as reached (../shared may be a symlink)
from test_ingest_pdf import make_pdf

LONG = CORPORA / "pdfs-long"
needs_long = pytest.mark.skipif(not LONG.is_dir(), reason="../shared/corpora/pdfs-long is not present")
needs_pdfs = pytest.mark.skipif(not PDFS.is_dir(), reason="../shared/corpora is not present")


@lru_cache(maxsize=None)
def _pages(path) -> dict[int, str]:
    return {s.page: s.text for s in parse_pdf(path).sections}


def _rows(path, page: int) -> list[str]:
    return _rows_in(_pages(path)[page])


def _rows_in(text: str) -> list[str]:
    if MARKER not in text:
        return []
    return [row.removeprefix(ROW) for row in text.split("\n" + MARKER + "\n", 1)[1].splitlines()]


def _row(path, page: int, label: str) -> str:
    found = [r for r in _rows(path, page) if r.startswith(label)]
    assert len(found) == 1, (label, _rows(path, page))
    return found[0]


# ---------------------------------------------------------------- a quarterly report's table, made here

def _ruled_page(rows: list[tuple[str, ...]], header: bool) -> bytes:
    """A 10-Q style table drawn with lines: a label column and four figure columns, under
    "Three Months Ended June 30," and "Six Months Ended June 30," each over "2024" and "2023"."""
    xs, top, step = [72, 250, 330, 410, 490, 570], 720, 20
    body = ([("", "Three Months Ended June 30,", "", "Six Months Ended June 30,", ""),
             ("", "2024", "2023", "2024", "2023")] if header else []) + rows
    bottom = top - step * len(body)
    ops = [b"0.5 w"]
    for k in range(len(body) + 1):
        ops.append(b"%d %d m %d %d l S" % (xs[0], top - k * step, xs[-1], top - k * step))
    for x in xs:  # the 2023 columns' rules start below the spanning header row
        start = top - step if header and x in (330, 490) else top
        ops.append(b"%d %d m %d %d l S" % (x, start, x, bottom))
    for k, row in enumerate(body):
        for x, text in zip(xs, row):
            if text:
                escaped = text.replace("(", "\\(").replace(")", "\\)")
                ops.append(f"BT /F1 9 Tf {x + 4} {top - k * step - 14} Td ({escaped}) Tj ET".encode())
    return b"\n".join(ops)


def test_a_quarterly_table_says_each_figure_with_its_label_columns_and_period(tmp_path) -> None:
    path = tmp_path / "acme-10q-2024-q2.pdf"
    rows = [("Product A", "1,234", "1,100", "2,468", "2,200"), ("Product B", "567", "(89)", "1,134", "(178)")]
    more = [("Product C", "12", "10", "24", "20")]
    path.write_bytes(make_pdf([_ruled_page(rows, header=True), _ruled_page(more, header=False)]))
    pages = _pages(path)
    assert _rows_in(pages[1]) == [
        "Product A — Three Months Ended June 30, 2024: 1,234; Three Months Ended June 30, 2023: 1,100; "
        "Six Months Ended June 30, 2024: 2,468; Six Months Ended June 30, 2023: 2,200",
        "Product B — Three Months Ended June 30, 2024: 567; Three Months Ended June 30, 2023: (89); "
        "Six Months Ended June 30, 2024: 1,134; Six Months Ended June 30, 2023: (178)"]
    # the table goes on over the page in the same frame, without its header: it keeps it
    assert _rows_in(pages[2]) == [
        "Product C — Three Months Ended June 30, 2024: 12; Three Months Ended June 30, 2023: 10; "
        "Six Months Ended June 30, 2024: 24; Six Months Ended June 30, 2023: 20"]
    assert pages[1].startswith("Three Months Ended June 30,")  # the plain text first, as it was
    assert "\n" + MARKER + "\n" + ROW + "Product A — " in pages[1]  # each row a list item: quoted alone


def _grid(*rows: list[tuple[float, float, str] | None]) -> list[list[Box | None]]:
    return [[Box(*cell) if cell else None for cell in row] for row in rows]


def test_a_value_under_two_header_cells_leaves_its_row_out() -> None:
    grid = _grid([(0, 50, "Item"), (50, 100, "Actual"), (100, 150, "Plan")],
                 [(0, 50, "Widgets"), (40, 160, "1,000"), None],  # spans both columns: a guess
                 [(0, 50, "Gadgets"), (50, 100, "10"), (100, 150, "12")])
    assert table_rows(grid)[0] == ["Gadgets — Actual: 10; Plan: 12"]


def test_titles_groups_and_prose_in_a_ruled_table() -> None:
    grid = _grid([(0, 300, "PERFORMANCE MEASURE: Percent of claims paid on time"), None, None],
                 [(0, 100, "FY 2022 Result"), (100, 200, "FY 2022 Target"), (200, 300, "Met")],
                 [(0, 100, "91%"), (100, 200, "≥90%"), (200, 300, "Met")],
                 [(0, 300, "Analysis: " + "the share rose because claims were sorted earlier. " * 5), None, None])
    assert table_rows(grid)[0] == ["PERFORMANCE MEASURE: Percent of claims paid on time — "
                                   "FY 2022 Result: 91%; FY 2022 Target: ≥90%; Met: Met"]
    grouped = _grid([(0, 100, "Number"), (100, 200, "Name")],
                    [(0, 200, "Counters and Timers"), None],
                    [(0, 100, "0xC00\n0xC02"), (100, 200, "cycle\ninstret")])
    assert table_rows(grouped)[0] == ["Counters and Timers: 0xC00 — Name: cycle",
                                      "Counters and Timers: 0xC02 — Name: instret"]


def test_a_headerless_table_in_another_frame_gives_no_rows() -> None:
    first = _grid([(0, 100, "Name"), (100, 200, "Count")], [(0, 100, "Apples"), (100, 200, "3")])
    _, header = table_rows(first)
    continued = _grid([(0, 100, "Pears"), (100, 200, "4")])
    assert table_rows(continued, header)[0] == ["Pears — Count: 4"]
    elsewhere = _grid([(50, 150, "Pears"), (150, 250, "4")])
    assert table_rows(elsewhere, header)[0] == []


# ---------------------------------------------------------------- tables without rules

def _lines(layout: str) -> list[list[Cell]]:
    """Lines of cells from text where two spaces part columns (a character is a point wide)."""
    return [mend_cells([Cell(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", line)])
            for line in layout.splitlines()]


LAYOUT = """\
                    FY 2020     FY 2021     FY 2022
Widgets sold           10          20          30
Gadgets sold           11          21          31
"""


def test_rows_pair_values_with_the_header_above() -> None:
    assert rows_in_lines(_lines(LAYOUT)) == ["Widgets sold — FY 2020: 10; FY 2021: 20; FY 2022: 30",
                                             "Gadgets sold — FY 2020: 11; FY 2021: 21; FY 2022: 31"]


def test_a_value_under_two_headers_or_none_leaves_the_row_out() -> None:
    # "1234567.00" covers columns 24-33: under both "FY 2020" (20-26) and "FY 2021" (32-38)
    straddling = LAYOUT.replace("Gadgets sold           11", "Gadgets sold" + " " * 12 + "1234567.00")
    straddling = straddling.replace("1234567.00          21", "1234567.00  21")
    assert rows_in_lines(_lines(straddling)) == ["Widgets sold — FY 2020: 10; FY 2021: 20; FY 2022: 30"]
    beyond = LAYOUT.replace("30\n", "30       40\n").replace("31\n", "31       41\n")
    assert rows_in_lines(_lines(beyond)) == []


def test_a_spanning_header_names_each_column_it_covers() -> None:
    layout = ("                 Revenue, $ million  Staff, headcount\n"
              "                 2021      2022      2022      2023\n"
              "North              10        12       120       130\n")
    assert rows_in_lines(_lines(layout)) == ["North — Revenue, $ million 2021: 10; Revenue, $ million 2022: 12; "
                                             "Staff, headcount 2022: 120; Staff, headcount 2023: 130"]


def test_a_column_under_two_header_cells_gets_no_rows() -> None:
    # "Actual" and "Plan" both sit over "FY 2020": which one heads it is a guess
    header = [Cell(95, 118, "Actual"), Cell(124, 145, "Plan")]
    columns = [Cell(100, 140, "FY 2020"), Cell(150, 190, "FY 2021")]
    row = [Cell(10, 40, "Widgets"), Cell(110, 130, "10"), Cell(160, 180, "20")]
    assert rows_in_lines([header, columns, row, row]) == []
    assert rows_in_lines([columns, row]) == ["Widgets — FY 2020: 10; FY 2021: 20"]


# ---------------------------------------------------------------- real reports (checked by eye)

@needs_long
def test_a_test_report_matrix_pairs_each_count_with_its_column() -> None:
    path = LONG / "nasa_cfe_6.5.0_build_test_report.pdf"
    assert _row(path, 13, "Executive Services (ES) — ") == (
        "Executive Services (ES) — Requirements Tested Passed: 136; Requirements Tested Failed: 5; "
        "Requirements Tested Partially: 0; Total Tested: 141; Deferred: 7; Total: 148")
    assert "Deferred: 6; Total: 39" in _row(path, 13, "Time Services (TIME) — ")
    # the outstanding tickets table runs from page 30 to 32 under page 30's header
    assert "Trac Ticket #: #144" in _row(path, 32, "Thread safety issues in CFE_TIME around the Sync Callbacks — ")


@needs_long
def test_the_plain_text_stays_as_it_was_before_the_rows() -> None:
    import pypdf

    from ragcli.ingest.pdf import _clean

    path = LONG / "nasa_cfe_6.5.0_build_test_report.pdf"
    plain = _clean(pypdf.PdfReader(path).pages[12].extract_text())
    assert _pages(path)[13].startswith(plain.rstrip("\n") + "\n\n" + MARKER + "\n")


@needs_long
def test_performance_measures_pair_results_with_their_fiscal_year() -> None:
    path = LONG / "opm_annual_performance_report_fy2022.pdf"
    row = _row(path, 32, "Percent of software projects implementing adequate incremental development — ")
    assert row.startswith("Percent of software projects implementing adequate incremental development — "
                          "Table: 2.5.001; FY 2018 Result: 100.00%; FY 2019 Result: 96.43%; FY 2020 Result: 85.71%")
    assert "FY 2022 Target: 92.00%; FY 2022 Target Met/ Not Met: Met" in row
    assert "FY 2022 Result: 68; FY 2022 Target: 65" in _row(path, 32, "OPM Leaders Lead score — ")
    # FY 2016: a row of results alone, named by the measure the table's title gives
    fy16 = LONG / "opm_annual_performance_report_fy2016.pdf"
    assert _rows(fy16, 105)[1] == (
        "PERFORMANCE MEASURE: Index score of customer satisfaction with HR Solutions products and services "
        "(ACSI-Equivalent Index) — FY 2012 Results: 76; FY 2013 Results: 80; FY 2014 Results: 78.8; "
        "FY 2015 Results: 76; FY 2016 Results: 80; FY 2016 Target: ≥80; FY 2016 Target Met/ Not Met: Met")


@needs_long
def test_a_row_of_text_under_the_header_is_a_row_not_more_header() -> None:
    # SP 800-82 Table 3-?: "Injury" is the first row under "Low-Impact ...", not part of the header
    path = LONG / "nist_sp800-82r2.pdf"
    assert _row(path, 76, "Financial Loss — ") == (
        "Financial Loss — Low-Impact: $1,000; Moderate-Impact: $100,000; High-Impact: Millions")
    assert _row(path, 76, "Injury — ").startswith("Injury — Low-Impact: Cuts, bruises requiring first aid")


@needs_long
def test_a_parameter_table_without_rules_keeps_its_header() -> None:
    path = LONG / "usgs_prms_tables_5.2.1.pdf"
    assert _row(path, 9, "albedo_day2 ").endswith("— Number of Values: 1; Data type: 4; Default value: albedo.day")
    assert _row(path, 9, "cbh_binary_flag ").endswith("Number of Values: 1; Data type: 1; Default value: 0")


@needs_long
def test_a_tax_table_printed_in_blocks_gives_a_row_per_block() -> None:
    # IRS 1040 instructions 2017, tax table page 80: its rules do not part the columns, so the
    # words are read by position: three blocks of six columns across the page, block by block.
    # Checked by eye: 12,300 / 12,350 / 1,383 / 1,233 / 1,383 / 1,233.
    path = LONG / "irs_i1040_instructions_2017.pdf"
    row = _row(path, 80, "If line 43 (taxable income) is— At least: 12,300;")
    assert row.startswith("If line 43 (taxable income) is— At least: 12,300; "
                          "If line 43 (taxable income) is— But less than: 12,350; Single: 1,383; ")
    assert row.endswith("1,233")


@needs_pdfs
def test_papers_prose_gets_no_table_rows() -> None:
    bart = _pages(PDFS / "1910.13461v1_bart_lewis2019.pdf")
    # page 5 is Table 1 (checked by eye); page 6's tables are left out: Table 2's label
    # swallows figures ("84.1/90.9"), Table 3 has "R1" bare beside "CNN/DailyMail R1"
    assert [n for n, text in bart.items() if MARKER in text] == [5]
    assert _row(PDFS / "1910.13461v1_bart_lewis2019.pdf", 5, "Masked Seq2seq — ") == (
        "Masked Seq2seq — SQuAD 1.1 F1: 87.0; MNLI Acc: 82.1; ELI5 PPL: 23.40; XSum PPL: 6.80; "
        "ConvAI2 PPL: 11.43; CNN/DM PPL: 6.19")
    dpr = _pages(PDFS / "2004.04906v3_dpr_karpukhin2020.pdf")
    assert MARKER not in dpr[1] and MARKER not in dpr[2]
    # DPR page 6: the in-batch column holds a check mark with no Unicode map, so "Gold 7" with
    # and without it would read as one row with two sets of figures: no rows
    assert MARKER not in dpr[6]


@needs_long
def test_figures_with_exponents_are_not_read_as_figures() -> None:
    # RISC-V page 88, Table 11.4: "−2^31" is set as "−2" with a raised "31"; read flat it is
    # "−231", a false figure. Its rows are left out (the encoding rows on the page stay).
    import pdfplumber

    from ragcli.ingest.pdf_plumber import page_lines

    with pdfplumber.open(LONG / "riscv_unprivileged_isa_20191213.pdf") as pdf:
        lines = page_lines(pdf.pages[87])
    assert any(c.text == "−2^31" for line in lines for c in line)
    rows = rows_in_lines(lines)
    assert not any("231" in r or "FCVT.W.S" in r for r in rows)
