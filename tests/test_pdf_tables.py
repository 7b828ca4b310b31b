"""Table rows of PDF pages said as "label — header: value" lines (ragcli/ingest/pdf_tables.py).

The pairings asserted on real PDFs were checked by eye against pypdf's layout text of the
page. A wrong pairing is worse than none, so pages whose layout text misplaces the header
are asserted to get no rows at all.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from ragcli.ingest.pdf import parse_pdf
from ragcli.ingest.pdf_tables import MARKER, Cell, rows_in_lines, table_rows

from conftest import CORPORA, PDFS  # the paths as reached (../shared may be a symlink)

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
    return text.split("\n" + MARKER + "\n", 1)[1].splitlines()


def _row(path, page: int, label: str) -> str:
    found = [r for r in _rows(path, page) if r.startswith(label)]
    assert len(found) == 1, (label, _rows(path, page))
    return found[0]


@needs_long
def test_a_test_report_matrix_pairs_each_count_with_its_column() -> None:
    path = LONG / "nasa_cfe_6.5.0_build_test_report.pdf"
    assert _row(path, 13, "Executive — ") == (
        "Executive — Requirements Tested Passed: 136; Requirements Tested Failed: 5; "
        "Requirements Tested Partially: 0; Total Tested: 141; Deferred: 7; Total: 148")
    assert "Deferred: 6; Total: 39" in _row(path, 13, "Time Services — ")
    assert len(_rows(path, 13)) == 5


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
    row = _row(path, 32, "2.5.001 ")
    # "100 .00%" in the layout text: the kerning space inside a figure is mended
    assert "FY 2018 Result: 100.00%; FY 2019 Result: 96.43%; FY 2020 Result: 85.71%" in row
    assert "FY 2022 Target: 92.00%; FY 2022 Target Met/ Not Met: Met" in row
    assert "FY 2022 Result: 68; FY 2022 Target: 65" in _row(path, 32, "2.6.001 OPM Leaders Lead score — ")


@needs_long
def test_a_parameter_table_with_wrapped_descriptions_keeps_its_header() -> None:
    path = LONG / "usgs_prms_tables_5.2.1.pdf"
    row = _row(path, 9, "albedo_day2 ")
    assert row.endswith("— Number of Values: 1; Data type: 4; Default value: albedo.day")
    # the third row sits below two lines of wrapped description
    assert _row(path, 9, "cbh_binary_flag ").endswith("Number of Values: 1; Data type: 1; Default value: 0")


@needs_long
def test_a_header_layout_text_misplaces_is_paired_by_position() -> None:
    # OPM FY 2016: in layout text the header line drifts right of its figures, so "≥80" (the
    # FY 2016 target) would sit under "FY 2012- FY 2016" and "Met" under nothing: no rows.
    # At the strings' real x spans every figure sits under its own column (checked by eye
    # against pypdf's positions of page 105: "FY 2016 Target" spans x 372-402, "≥80" 380-396).
    import pypdf

    from ragcli.ingest.pdf import _clean

    path = LONG / "opm_annual_performance_report_fy2016.pdf"
    assert "76 80 78.8 76 80 ≥80 Met" in _pages(path)[105]  # the plain text is there
    layout = pypdf.PdfReader(path).pages[104].extract_text(extraction_mode="layout")
    assert table_rows(_clean(layout)) == []
    assert _rows(path, 105) == [
        "FY 2012 Results: 92; FY 2013 Results: 98; FY 2014 Results: 90; FY 2015 Results: 97.8; "
        "FY 2016 Results: 97.9; FY 2016 Target: ≥90; FY 2016 Target Met/ Not Met: Met",
        "FY 2012 Results: 76; FY 2013 Results: 80; FY 2014 Results: 78.8; FY 2015 Results: 76; "
        "FY 2016 Results: 80; FY 2016 Target: ≥80; FY 2016 Target Met/ Not Met: Met"]
    assert _rows(path, 61)[0].endswith("FY 2016 Results: 15,490; FY 2016 Target: ≥3,700; "
                                       "FY 2016 Target Met/ Not Met: Met")


@needs_long
def test_a_tax_table_printed_in_blocks_gives_a_row_per_block() -> None:
    # IRS 1040 instructions 2017, tax table page 80: three blocks of six columns across the
    # page, each row read block by block; the header wrapped over three lines is said whole.
    # Checked by eye against pypdf's positions: 12,000 / 12,050 / 1,338 / 1,203 / 1,338 / 1,203.
    # (Parsing the file reaches the tax tables through a probe, see the probe test below.)
    import pypdf

    from ragcli.ingest.pdf_positions import page_lines

    path = LONG / "irs_i1040_instructions_2017.pdf"
    rows = rows_in_lines(page_lines(pypdf.PdfReader(path).pages[79]))
    assert rows[0] == (
        "If line 43 (taxable income) is— At least: 12,000; "
        "If line 43 (taxable income) is— But less than: 12,050; Single: 1,338; "
        "And you are— Married filing jointly * Your tax is—: 1,203; "
        "And you are— Married filing separately Your tax is—: 1,338; Head of a household: 1,203")
    # the first block's rows come first (12,000 to 14,950), then the second block's
    assert [r.split(";")[0][-6:] for r in rows[59:61]] == ["14,950", "15,000"]
    assert [r for r in rows if r.startswith("If line 43 (taxable income) is— At least: 18,000;")] == [
        "If line 43 (taxable income) is— At least: 18,000; "
        "If line 43 (taxable income) is— But less than: 18,050; Single: 2,238; "
        "And you are— Married filing jointly * Your tax is—: 1,803; "
        "And you are— Married filing separately Your tax is—: 2,238; Head of a household: 2,036"]


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


@needs_pdfs
def test_a_row_with_an_unreadable_mark_or_an_exponent_is_left_out() -> None:
    # DPR page 6: the in-batch column holds a check mark drawn as "\x13" (no Unicode map),
    # so "Gold 7" with and without it would read as one row with two sets of figures.
    assert _rows(PDFS / "2004.04906v3_dpr_karpukhin2020.pdf", 6) == []


@needs_long
def test_figures_with_exponents_are_not_read_as_figures() -> None:
    # RISC-V page 88, Table 11.4: "−2^31" is set as "−2" with a raised "31"; read flat it is
    # "−231", a false figure. Its rows are left out (the encoding rows on the page stay).
    path = LONG / "riscv_unprivileged_isa_20191213.pdf"
    from ragcli.ingest.pdf_positions import page_lines
    import pypdf

    lines = page_lines(pypdf.PdfReader(path).pages[87])
    assert any(c.text == "−2^31" for line in lines for c in line)
    rows = rows_in_lines(lines)
    assert rows and not any("231" in r or "FCVT.W.S" in r for r in rows)


def test_a_column_under_two_header_cells_gets_no_rows() -> None:
    # "Actual" and "Plan" both sit over "FY 2020": which one heads it is a guess
    header = [Cell(95, 118, "Actual"), Cell(124, 145, "Plan")]
    columns = [Cell(100, 140, "FY 2020"), Cell(150, 190, "FY 2021")]
    row = [Cell(10, 40, "Widgets"), Cell(110, 130, "10"), Cell(160, 180, "20")]
    assert rows_in_lines([header, columns, row, row]) == []
    assert rows_in_lines([columns, row]) == ["Widgets — FY 2020: 10; FY 2021: 20"]


LAYOUT = """\
                    FY 2020     FY 2021     FY 2022
Widgets sold           10          20          30
Gadgets sold           11          21          31
"""


def test_rows_pair_values_with_the_header_above() -> None:
    assert table_rows(LAYOUT) == ["Widgets sold — FY 2020: 10; FY 2021: 20; FY 2022: 30",
                                  "Gadgets sold — FY 2020: 11; FY 2021: 21; FY 2022: 31"]


def test_a_value_under_two_headers_or_none_leaves_the_row_out() -> None:
    # "1234567.00" covers columns 24-33: under both "FY 2020" (20-26) and "FY 2021" (32-38)
    straddling = LAYOUT.replace("Gadgets sold           11", "Gadgets sold" + " " * 12 + "1234567.00")
    straddling = straddling.replace("1234567.00          21", "1234567.00  21")
    assert table_rows(straddling) == ["Widgets sold — FY 2020: 10; FY 2021: 20; FY 2022: 30"]
    beyond = LAYOUT.replace("30\n", "30       40\n").replace("31\n", "31       41\n")
    assert table_rows(beyond) == []


def test_a_spanning_header_names_each_column_it_covers() -> None:
    layout = ("                 Revenue, $ million  Staff, headcount\n"
              "                 2021      2022      2022      2023\n"
              "North              10        12       120       130\n")
    assert table_rows(layout) == ["North — Revenue, $ million 2021: 10; Revenue, $ million 2022: 12; "
                                  "Staff, headcount 2022: 120; Staff, headcount 2023: 130"]


@needs_long
def test_a_file_whose_tables_give_no_rows_stops_paying_for_them(monkeypatch):
    """Reading positions costs up to ~0.9 s a page; after FRUITLESS_TABLE_PAGES tabular-looking
    pages in a row without a row, only every PROBE_EVERY-th one is tried. USGS TM 6-B8 has 13
    tabular-looking pages and no row on any: 10 are read, then none (no 10th page to probe)."""
    import ragcli.ingest.pdf as pdf
    import ragcli.ingest.pdf_positions as positions

    read: list[int] = []
    page_lines = positions.page_lines
    monkeypatch.setattr(positions, "page_lines", lambda page: read.append(1) or page_lines(page))
    path = LONG / "usgs_tm6-b8_prms_enhancements.pdf"
    def rows() -> int:
        read.clear()
        return sum(len(_rows_in(s.text)) for s in parse_pdf(path).sections)
    assert rows() == 0 and len(read) == 10
    monkeypatch.setattr(pdf, "FRUITLESS_TABLE_PAGES", 1000)
    assert rows() == 0 and len(read) == 13


@needs_long
def test_a_probe_past_the_fruitless_pages_finds_the_tax_tables() -> None:
    # IRS 1040 instructions: 23 tabular-looking pages without rows (worksheets, the EIC
    # table) come before the tax tables; the probe on page 83 finds rows, reading resumes,
    # and the pages passed over since the last probe (80-82) are tried after all.
    path = LONG / "irs_i1040_instructions_2017.pdf"
    with_rows = [n for n, text in _pages(path).items() if MARKER in text]
    assert with_rows[:5] == [80, 81, 82, 83, 84] and 89 in with_rows
    # bench/questions/pdf_tables.jsonl pdf-06, checked by eye on page 80: 12,300-12,350, single: 1,383
    assert _row(path, 80, "If line 43 (taxable income) is— At least: 12,300;") == (
        "If line 43 (taxable income) is— At least: 12,300; "
        "If line 43 (taxable income) is— But less than: 12,350; Single: 1,383; "
        "And you are— Married filing jointly * Your tax is—: 1,233; "
        "And you are— Married filing separately Your tax is—: 1,383; Head of a household: 1,233")
