"""The figure a question asks for, said from a table row among the quotes (ragcli/retrieve/figures.py).
The rows are as the PDF reader writes them (tests/test_pdf_tables.py makes them from real pages)."""

from __future__ import annotations

import re

import pytest

from ragcli.retrieve.figures import direct_figure, quote_the_row
from ragcli.types import Chunk, Hit, Quote

from conftest import CORPORA  # the path as reached (../shared may be a symlink)

OPM = ("- PERFORMANCE MEASURE: OPM’s Federal Employee Viewpoint Survey Employee Engagement Index score — "
       "FY 2012 Results: 71%; FY 2013 Results: 72%; FY 2014 Results: 72%; FY 2015 Results: 71.1%; "
       "FY 2016 Results: 71.3%; FY 2016 Target: ≥73%; FY 2016 Target Met/ Not Met: Not Met")
IQ = ("- PERFORMANCE MEASURE: Overall New IQ score — FY 2012 Results: 63%; FY 2013 Results: 64%; "
      "FY 2014 Results: 64%; FY 2015 Results: 64%; FY 2016 Results: 64%; FY 2016 Target: ≥66%")
TENQ = ("- Product A — Three Months Ended June 30, 2024: 1,234; Three Months Ended June 30, 2023: 1,100; "
        "Six Months Ended June 30, 2024: 2,468; Six Months Ended June 30, 2023: 2,200")


def _quote(n: int, text: str) -> Quote:
    return Quote(n, text, "item", "/r/report.pdf", "Report", "Report", 40, 40, 51, 0.6)


def test_the_figure_of_the_period_asked_for() -> None:
    quotes = [_quote(1, IQ), _quote(2, OPM)]
    figure = direct_figure("What was OPM's employee engagement index score in fiscal 2016?", quotes)
    assert figure is not None and (figure.value, figure.header, figure.n) == ("71.3%", "FY 2016 Results", 2)
    assert figure.sentence().startswith("71.3% — PERFORMANCE MEASURE: OPM’s Federal Employee")
    target = direct_figure("What was the target for OPM's engagement index score in FY 2016?", quotes)
    assert target is not None and target.value == "≥73%"
    earlier = direct_figure("What was the New IQ score in 2014?", quotes)
    assert earlier is not None and (earlier.value, earlier.header) == ("64%", "FY 2014 Results")


def test_a_quarter_named_in_words() -> None:
    figure = direct_figure("How much did Product A sell in the six months ended June 30, 2023?", [_quote(1, TENQ)])
    assert figure is not None and figure.value == "2,200"


def test_a_count_asked_is_not_answered_by_a_percentage() -> None:
    row = [_quote(1, "- Percent of contract actions in compliance with past performance reporting requirements — "
                     "FY 2021 Result: 30.00%; FY 2022 Result: 51.90%; FY 2022 Target: 70.00%")]
    assert direct_figure("How many contract actions met past performance reporting requirements in FY 2022?",
                         row) is None
    share = direct_figure("What percent of contract actions met past performance reporting requirements in 2022?", row)
    assert share is not None and share.value == "51.90%"


def test_no_figure_when_no_row_is_clearly_the_one() -> None:
    quotes = [_quote(1, IQ), _quote(2, OPM)]
    assert direct_figure("What was the score in 2016?", quotes) is None  # two rows fit as well
    assert direct_figure("What was OPM's engagement score in 2019?", quotes) is None  # no such period
    assert direct_figure("Why did engagement stay flat?", [_quote(1, "Gains were offset by FIS.")]) is None


MATRIX = ["- Executive Services (ES) — Requirements Tested Passed: 136; Total Tested: 141; Deferred: 7",
          "- Time Services (TIME) — Requirements Tested Passed: 33; Total Tested: 33; Deferred: 6",
          "- Tables (TBL) — Requirements Tested Passed: 51; Total Tested: 51; Deferred: 0"]


def _idf(terms: list[str]) -> dict[str, float]:  # as in the report: every page says "requirements"
    return {t: 0.1 if t in ("requirement", "test", "service", "many", "were") else 2.0 for t in terms}


def test_the_row_must_be_the_one_the_question_names() -> None:
    quotes = [_quote(1, "\n".join(MATRIX))]
    idf = _idf
    figure = direct_figure("How many Time Services requirements were deferred?", quotes, idf)
    assert figure is not None and (figure.value, figure.label) == ("6", "Time Services (TIME)")
    # "Table Services" names the "Tables (TBL)" row: the words before its short name are its name
    # (rp-58); the column is the one the question names, "in total"
    tables = direct_figure("How many Table Services requirements were tested in total?", quotes, idf)
    assert tables is not None and (tables.value, tables.label, tables.header) == ("51", "Tables (TBL)", "Total Tested")
    assert direct_figure("How many TBL requirements were deferred?", quotes, idf).value == "0"  # its short name
    assert direct_figure("Why were Time Services requirements deferred?", quotes, idf) is None  # no figure asked
    # the Executive Services row quoted alone: "services" is one of its label's words, not its name
    alone = [_quote(1, MATRIX[0])]
    assert direct_figure("How many Table Services requirements were tested in total?", alone, idf) is None
    assert direct_figure("How many Executive Services requirements passed?", alone, idf).value == "136"


# the cFE report's matrix (p. 13) as the PDF reader writes it: three headers say "Requirements"
SB = ("- Software Bus (SB) — Requirements Tested Passed: 35; Requirements Tested Failed: 0; "
      "Requirements Tested Partially: 0; Total Tested: 35; Deferred: 0; Total: 35")


def test_the_column_is_the_one_the_question_names() -> None:
    quotes = [_quote(1, "\n".join(MATRIX))]
    # a word of one header only ("deferred") or of the period picks the column
    assert direct_figure("How many Time Services requirements were deferred?", quotes, _idf).header == "Deferred"
    assert direct_figure("What was OPM's engagement index score in 2014?", [_quote(1, OPM)]).value == "72%"
    # the question asks for a column the row does not have: its first figure would be a guess (rp-57)
    analysis = "How many Software Bus requirements were checked by analysis?"
    assert direct_figure(analysis, [_quote(1, SB)], _idf) is None
    # ... while a question that asks nothing the row does not name gets the row's first figure
    assert direct_figure("How many Software Bus requirements were tested?", [_quote(1, SB)], _idf).value == "35"
    assert direct_figure("How many Software Bus requirements failed?", [_quote(1, SB)], _idf).header == \
        "Requirements Tested Failed"


def test_a_row_that_gives_the_figure_is_quoted_when_no_quote_is_it() -> None:
    page = Chunk("c51", "/r/report.pdf", "Report", "Report", f"Table rows:\n{IQ}\n{OPM}", 40, 42, 51)
    sentence = Quote(1, "Engagement rose in most of OPM's offices.", "sentence", "/r/report.pdf", "Report",
                     "Report", 5, 5, 39, 0.7)
    question = "What was OPM's employee engagement index score in fiscal 2016?"
    quotes = quote_the_row(question, [sentence], [Hit(page, 1.0, 1)])
    assert [q.n for q in quotes] == [1, 2] and quotes[1].text == OPM[2:]
    assert (quotes[1].page, quotes[1].line_start, quotes[1].score) == (51, 42, 0.7)
    figure = direct_figure(question, quotes)
    assert figure is not None and (figure.value, figure.n) == ("71.3%", 2)
    assert quote_the_row("Why did OPM's employee engagement stay flat?", [sentence], [Hit(page, 1.0, 1)]) == [sentence]
    # a row named by two words only ("Time Services") is left to the evidence's own choice
    matrix = Chunk("c13", "/r/report.pdf", "Report", "Report", "Table rows:\n" + "\n".join(MATRIX), 40, 43, 13)
    assert quote_the_row("How many Time Services requirements were deferred?", [sentence],
                         [Hit(matrix, 1.0, 1)], _idf) == [sentence]


# ---------------------------------------------------------------- end to end, on a real report's pages

CFE = CORPORA / "pdfs-long" / "nasa_cfe_6.5.0_build_test_report.pdf"
EVS = "How many Event Services requirements were tested in total in NASA's cFE 6.5.0 build test report?"


@pytest.fixture(scope="module")
def cfe_pages(tmp_path_factory, models_dir) -> dict[str, str]:
    """NASA's cFE 6.5.0 test report cut to four of its pages, indexed: its requirements matrix
    (p. 13: a row per service) and the pages that talk about the same services in prose (pp. 14,
    22, 23), which took the quotes before the rows could."""
    if not CFE.is_file():
        pytest.skip("../shared/corpora/pdfs-long is not present")
    from pypdf import PdfReader, PdfWriter

    from ragcli.config import load_config
    from ragcli.pipeline import index

    folder = tmp_path_factory.mktemp("cfe-report")
    reader, writer = PdfReader(CFE), PdfWriter()
    for page in (13, 14, 22, 23):
        writer.add_page(reader.pages[page - 1])
    with open(folder / CFE.name, "wb") as f:
        writer.write(f)
    env = {"RAG_HOME": str(tmp_path_factory.mktemp("cfe-home")), "RAG_MODELS_DIR": str(models_dir)}
    assert index(load_config(env=env), [folder]).files_indexed == 1
    return env


def _cited(result) -> Quote:
    n = int(re.search(r"\[(\d+)\]", result.text).group(1))
    return next(q for q in result.quotes if q.n == n)


def test_a_figure_question_quotes_the_row_and_says_the_figure_first(cfe_pages, monkeypatch) -> None:
    from ragcli.config import load_config
    from ragcli.pipeline.answer import answer

    for name, value in cfe_pages.items():
        monkeypatch.setenv(name, value)
    config = load_config()
    result = answer(config, EVS, quotes_only=True)
    assert result.text.startswith("65 — Event Services (EVS), Total Tested ["), result.text
    row = _cited(result)
    assert row.page == 1 and "Event Services (EVS) — Requirements Tested Passed: 65;" in row.text
    deferred = answer(config, "How many Time Services requirements were deferred in NASA's cFE 6.5.0 build "
                      "test report?", quotes_only=True)
    assert deferred.text.startswith("6 — Time Services (TIME), Deferred ["), deferred.text
    assert "Time Services (TIME) — " in _cited(deferred).text
    purpose = answer(config, "What is the purpose of the EVS log test in the cFE build test?", quotes_only=True)
    assert purpose.covered and purpose.text == ""  # no figure asked: the quotes alone


def test_the_figure_said_first_survives_the_model_and_its_checks(cfe_pages, monkeypatch) -> None:
    from ragcli.config import load_config
    from ragcli.pipeline.answer import answer

    for name, value in cfe_pages.items():
        monkeypatch.setenv(name, value)
    said: list[str] = []
    result = answer(load_config(), EVS, on_token=said.append)
    assert result.text.startswith("65 — Event Services (EVS), Total Tested ["), result.text
    assert "".join(said).startswith("65 — ")  # streamed first, before the model's own words
    assert "Event Services (EVS) — Requirements Tested Passed: 65;" in _cited(result).text
    assert not result.quoted_fallback


def test_the_figure_is_said_before_the_quotes_on_a_terminal_and_piped(cfe_pages) -> None:
    # On a terminal `rag ask --quotes` printed the quotes and never the figure: it was said
    # only into the answer's text, which a streamed answer does not print again.
    from helpers import on_a_terminal, rag

    code, shown = on_a_terminal(["ask", "--quotes", EVS], env={**cfe_pages, "RAG_DAEMON": "off"})
    text = shown.decode("utf-8", "replace")
    assert code == 0, text
    assert "65 — Event Services (EVS), Total Tested [" in text
    assert text.index("65 — Event Services") < text.index("[1] ")
    piped = rag("ask", "--quotes", EVS, env={**cfe_pages, "RAG_DAEMON": "off"}, text=True)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("65 — Event Services (EVS), Total Tested ["), piped.stdout[:300]
    assert "\n\n" in piped.stdout[:piped.stdout.index("[1] ")]  # a blank line between answer and quotes


TRIBES = ("- Number of tribes, tribal organizations or urban Indian organizations participating in FEHB — "
          "FY 2015 Results: 85; FY 2016 Results: 90; FY 2016 Target: ≥84")
ENROLLED = ("- Number of tribal employees enrolled in FEHB — FY 2015 Results: 17,500; FY 2016 Results: 19,000; "
            "FY 2016 Target: ≥18,000")


def test_an_acronym_in_the_label_is_the_words_the_question_spells_out() -> None:
    """The row says "FEHB", the reader "the federal employees health benefits program"; the
    measure's own page repeats the summary table's row under a longer label, with the same
    figures: no rival."""
    asks = ("How many tribes and tribal organizations took part in the federal employees health benefits "
            "program in 2016?")
    measure = TRIBES.replace("- Number", "- PERFORMANCE MEASURE: Number")
    quotes = [_quote(1, ENROLLED), _quote(2, TRIBES), _quote(3, measure)]
    figure = direct_figure(asks, quotes)
    assert figure is not None and figure.value == "90", figure
    page = Chunk("c", "/r/report.pdf", "Report", "Report", f"Table rows:\n{ENROLLED}\n{TRIBES}", 66, 68, 48)
    rows = [Hit(page, 1.0, 1)]
    shown = quote_the_row(asks, [_quote(1, "OPM extended insurance benefits to employees of certain tribes.")], rows)
    assert any("FY 2016 Results: 90" in q.text for q in shown), [q.text for q in shown]


CLICKS = ("Hand grinder with 30 micron steps per click. Settings I use:\n| Brew        | Clicks |\n"
          "|-------------|--------|\n| Espresso    | 8      |\n| Pour over   | 18     |\n| French press| 30     |")


def test_a_markdown_table_gives_its_cell_under_the_column_header() -> None:
    quote = Quote(1, CLICKS, "block", "/v/Coffee/Grinders.md", "Grinders", "Grinders > Comandante C40", 5, 11,
                  None, 0.6)
    figure = direct_figure("How many clicks on the Comandante do I use for espresso?", [quote])
    assert figure is not None and (figure.value, figure.label, figure.header) == ("8", "Espresso", "Clicks")
    assert figure.sentence() == "8 — Espresso, Clicks [1]."
    press = direct_figure("How many clicks for a French press?", [quote])
    assert press is not None and press.value == "30"
    assert direct_figure("How many clicks do I use?", [quote]) is None  # no row named: a guess


def test_the_clicks_for_espresso_come_first_from_the_notes_table(example_vault_env) -> None:
    from helpers import rag

    shown = rag("ask", "--quotes", "How many clicks for espresso on my grinder, and how long should the shot take?",
                env={**example_vault_env, "RAG_DAEMON": "off"}, text=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("8 — Espresso, Clicks [1]."), shown.stdout[:300]
    assert "in 25 to 30 seconds" in shown.stdout  # the second part, quoted


def test_a_count_the_text_states_is_said_first_when_no_row_gives_it(cfe_pages, monkeypatch) -> None:
    """The matrix has no column for analysis; p. 14's summary says "25 requirements were
    validated by analysis" beside "111 requirements passed demonstration"."""
    from ragcli.config import load_config
    from ragcli.pipeline.answer import answer

    for name, value in cfe_pages.items():
        monkeypatch.setenv(name, value)
    result = answer(load_config(), "How many Executive Services requirements were validated by analysis in NASA's "
                    "cFE 6.5.0 build test?", quotes_only=True)
    assert result.text.startswith("25 requirements ["), [(q.page, q.text) for q in result.quotes]
    assert "25 requirements were validated by analysis" in " ".join(_cited(result).text.split())
