"""Table rows of PDF pages said as "label — header: value" lines (ragcli/ingest/pdf_tables.py).

The pairings asserted on real PDFs were checked by eye against pypdf's layout text of the
page. A wrong pairing is worse than none, so pages whose layout text misplaces the header
are asserted to get no rows at all.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from ragcli.ingest.pdf import parse_pdf
from ragcli.ingest.pdf_tables import MARKER, table_rows

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
def test_a_header_layout_text_misplaces_gets_no_rows() -> None:
    # OPM FY 2016: the header line drifts right of its figures in layout text, so "≥80"
    # (the FY 2016 target) would sit under "FY 2012- FY 2016" and "Met" under nothing.
    path = LONG / "opm_annual_performance_report_fy2016.pdf"
    assert "76 80 78.8 76 80 ≥80 Met" in _pages(path)[105]  # the plain text is there
    assert _rows(path, 105) == [] and _rows(path, 61) == []


@needs_pdfs
def test_papers_prose_gets_no_table_rows() -> None:
    bart = _pages(PDFS / "1910.13461v1_bart_lewis2019.pdf")
    assert [n for n, text in bart.items() if MARKER in text] == []
    dpr = _pages(PDFS / "2004.04906v3_dpr_karpukhin2020.pdf")
    assert MARKER not in dpr[1] and MARKER not in dpr[2]
    # page 6: a table beside a text column; only the row with no text beside it is said
    assert _rows(PDFS / "2004.04906v3_dpr_karpukhin2020.pdf", 6) == [
        "Gold — #N: 127; Top-5: 55.8; Top-20: 73.0; Top-100: 83.1"]


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
def test_a_file_whose_tables_give_no_rows_stops_paying_for_layout_mode(monkeypatch):
    """Layout mode costs up to ~0.8 s a page; after FRUITLESS_TABLE_PAGES tabular-looking
    pages in a row without a row, the file's later pages are not tried. The RISC-V manual's
    rows sit behind a longer fruitless streak: they come back when the budget is raised."""
    import ragcli.ingest.pdf as pdf

    path = LONG / "riscv_unprivileged_isa_20191213.pdf"
    def rows() -> int:
        return sum(len(_rows_in(s.text)) for s in parse_pdf(path).sections)
    assert rows() == 0
    monkeypatch.setattr(pdf, "FRUITLESS_TABLE_PAGES", 1000)
    assert rows() == 6
