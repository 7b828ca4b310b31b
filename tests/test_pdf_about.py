"""What a report is about (ragcli/ingest/pdf_about.py): organisation, report and period from
the file name, metadata, cover and running headers; carried by every chunk of the PDF."""

from __future__ import annotations

import pytest

from ragcli.ingest.pdf_about import read_about, running_headers

from conftest import CORPORA

LONG = CORPORA / "pdfs-long"
WORDS = "river mountain lantern copper orchard meadow glacier harbor violet canyon".split()
needs_long = pytest.mark.skipif(not LONG.is_dir(), reason="../shared/corpora/pdfs-long is not present")

FILING_COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-Q
QUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the quarterly period ended June 30, 2024
OR
Commission File Number 001-12345
Northwind Widgets, Inc.
(Exact name of registrant as specified in its charter)
Delaware 12-3456789"""


def _page(n: int, body: str) -> str:
    return f"Northwind Widgets, Inc. | Q2 2024 Form 10-Q\n{body}\n{n}"


def test_a_quarterly_filing_gives_registrant_report_and_quarter() -> None:
    pages = [FILING_COVER] + [_page(n, "Three Months Ended June 30, 2024 and 2023\nRevenue 1,234 1,100")
                              for n in range(2, 12)]
    about = read_about("nwd-20240630", {}, pages)
    assert about.organisation == "Northwind Widgets, Inc."
    assert about.report.lower() == "form 10-q"
    assert about.period_end == "2024-06-30"  # the filing's quarter, not the comparative year before
    assert "Q2 2024" in about.period and "June 30, 2024" in about.period
    assert "2024-q2" in about.tags()
    assert about.line().startswith("Northwind Widgets, Inc. · Form 10-Q · ")


def test_a_fiscal_year_from_the_title_and_an_acronym_the_file_name_uses() -> None:
    meta = {"title": "Annual Performance Report Fiscal Year 2019", "author": "United States Bureau of River Management"}
    pages = ["Bureau of River Management\nAnnual Performance Report\nFiscal Year 2019\nMARCH 2020"] + [
        f"{n}\nBRM Fiscal Year 2019 Annual Performance Report\n{word} text" for n, word in enumerate(WORDS, 2)]
    about = read_about("brm_apr_fy2019", meta, pages)
    assert about.acronym == "BRM" and about.organisation == "United States Bureau of River Management"
    assert about.report == "Annual Performance Report"
    assert about.period.startswith("Fiscal Year 2019") and about.period_end == "2019-12-31"  # not the print date
    assert about.tags() == ("brm", "fy2019")


def test_nothing_said_when_nothing_is_found() -> None:
    about = read_about("notes", {}, ["a page of plain prose without any date or name in it"] * 3)
    assert about.line() == "" and about.period_end is None and about.tags() == ()


def test_running_headers_are_lines_repeated_at_the_top_or_foot_with_page_numbers_aside() -> None:
    pages = [f"Acme Corp Annual Report 2023\nThe {word} paragraph\nends here about {word}\nPage {n}"
             for n, word in enumerate(WORDS, 1)]
    pages[3] = "a page without the header"
    assert running_headers(pages) == ["Acme Corp Annual Report 2023", "Page 1"]


@needs_long
def test_a_real_report_carries_what_it_is_about_on_every_chunk() -> None:
    from ragcli.ingest.chunk import chunk_document
    from ragcli.ingest.pdf import parse_pdf

    doc = parse_pdf(LONG / "opm_annual_performance_report_fy2022.pdf")
    assert doc.date == "2022-12-31" and set(doc.tags) == {"opm", "fy2022"}
    chunks = chunk_document(doc, lambda text: len(text.split()) + 2, 256, 32)
    assert chunks and all("(OPM)" in c.heading and "Fiscal Year 2022" in c.heading for c in chunks)
    assert all("Fiscal Year 2022" in c.embed_text().splitlines()[0] and "FY22" in c.embed_text().splitlines()[0]
               for c in chunks)
    assert all("(OPM)" not in c.text.splitlines()[0] for c in chunks[:5])  # what is quoted stays the page's text
