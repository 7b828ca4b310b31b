"""Quotes from report pages (issue 20): the unit that holds what the question asks is shown,
not only the sentences around it that share more of its words. Real embedding model; the
pages are report text as the PDF reader gives it (several sentences to a line)."""

from __future__ import annotations

import re

import pytest

from ragcli.config import load_config
from ragcli.retrieve import Searcher
from ragcli.retrieve.evidence import select_quotes
from ragcli.types import Chunk, Hit
from ragcli.words import answer_type, holds_figure

TITLE = "Annual Performance Report"


def flat_idf(terms):
    return {t: 1.0 for t in terms}


@pytest.fixture(scope="module")
def embed(example_vault_env):
    searcher = Searcher(load_config(env=example_vault_env))
    yield searcher.embedder.embed
    searcher.close()


def _page(cid: str, text: str, start: int, page: int) -> Chunk:
    return Chunk(cid, "/r/report.pdf", TITLE, TITLE, text, start, start + text.count("\n"), page)


def _shown(quotes) -> str:
    return " ".join(q.text for q in quotes)


def test_a_share_is_answered_by_a_percentage_or_n_out_of_m(embed):
    """The sentences on training seminars share every word of "what share of benefits officers
    did OPM train"; the one that answers says "57 out of 68"."""
    asks = "What share of benefits officers did OPM train in fiscal year 2016?"
    assert answer_type(asks) is not None and answer_type("What share of the vault is synced?") is not None
    assert holds_figure("OPM trained 57 out of 68 respondents.", asks) and holds_figure("Results: 83.8%", asks)
    assert not holds_figure("Percent of benefits officers trained per year", asks)
    text = ("To continue to meet benefits officers' mandatory training needs, OPM delivered virtual benefits\n"
            "officers training seminars. Through the Benefits Officers Virtual Training Seminar, held in\n"
            "November 2015, OPM provided updates to benefits officers on benefits initiatives.\n"
            "OPM conducted the survey in October 2016. OPM trained 57 out of 68 benefits officer survey respondents.\n"
            "To obtain a better assessment of benefit officers trained, OPM posted the survey to a benefits\n"
            "officer's listserv, which increased survey visibility.")
    quotes = select_quotes(asks, [Hit(_page("p87", text, 40, 87), 1.0, 1)], embed, flat_idf)
    assert "57 out of 68" in _shown(quotes), [q.text for q in quotes]


def test_the_sentence_after_the_best_quote_gives_its_figures(embed):
    """"Why is 2024 the last year to file Form 5405": the sentence that says so matches; the
    next, in other words, holds the answer's figures (a 15-year period from 2008), and alone
    scores far under the best."""
    text = ("Form 5405 repayment. 2024 is the last year to file Form 5405. The 15-year repayment\n"
            "period for the first-time homebuyer credit for homes purchased in 2008 began with your 2010\n"
            "tax return and ends with your 2024 tax return.\n"
            "Standard mileage rate. The business mileage rate is 67 cents per mile.")
    quotes = select_quotes("Why is 2024 the last year to file Form 5405?", [Hit(_page("p4", text, 20, 4), 1.0, 1)],
                           embed, flat_idf)
    assert "2024 is the last year to file Form 5405." in _shown(quotes)
    assert "15-year" in _shown(quotes) and "2008" in _shown(quotes), [q.text for q in quotes]
    assert "mileage" not in _shown(quotes)  # not a sentence further on


def test_a_sentence_cut_at_a_chunks_end_leaves_the_whole_sentence_shown(embed):
    """Two chunks of one page overlap: the first ends inside a sentence the second holds whole.
    The cut one spans more lines, the whole one holds its words: each covered the other and
    neither was shown. Two sentences sharing lines are not one inside the other, and of two
    quotes that each cover the other the one with more words stays."""
    whole = ("The AMT exemption amount is increased to $85,700 ($133,300 if married filing jointly or "
             "qualifying surviving spouse; $66,650 if married filing separately).")
    cut = ("Alternative minimum tax (AMT) exemption amount increased. The AMT exemption amount is\n"
           "increased to $85,700 ($133,300 if married filing jointly or qualifying surviving spouse;")
    first = _page("a", cut, 15, 5)
    second = _page("b", whole + "\nThe income levels at which the AMT exemption begins to phase out have increased "
                                "to $609,350 ($1,218,700 if married filing jointly).", 16, 5)
    quotes = select_quotes("What is the 2024 AMT exemption amount for married couples filing jointly?",
                           [Hit(second, 1.0, 1), Hit(first, 0.9, 2)], embed, flat_idf)
    assert whole in [q.text for q in quotes], [q.text for q in quotes]


def test_a_paragraph_quoted_whole_is_not_quoted_again_for_its_next_sentence(embed):
    """A short paragraph is quoted whole around its best sentence; the sentence after that one
    is already shown in it, and is not printed a second time."""
    note = Chunk("n", "/v/Pour over.md", "Pour over", "Pour over > Ratio and grind",
                 "## Ratio and grind\n\nUse 15 g of coffee to 250 g of water, a ratio of about 1:16.7. Grind "
                 "medium-fine, like coarse sand: setting 18 on the Comandante.", 11, 13)
    quotes = select_quotes("What coffee to water ratio for pour over?", [Hit(note, 1.0, 1)], embed, flat_idf)
    texts = [q.text for q in quotes]
    assert len(texts) == len(set(texts)) and sum("setting 18" in t for t in texts) == 1, texts


def test_the_figures_a_chart_announces_are_shown_past_its_announcing_lines(embed):
    """A chart's lines announce its figures ("IF your filing status is..." "THEN your standard
    deduction is...") before the figures, which alone share few of the question's words. The
    walk from the best quote passes them, and a letter-spaced label ("T a b l e 1 0 - 1 .",
    whose digits only name the table), to the line that states the figures."""
    text = ("2024 Standard Deduction Tables If you are married filing a separate return and your spouse\n"
            "itemizes deductions, you can't take the standard deduction.\n"
            "T a b l e 1 0 - 1 . Standard Deduction Chart for Most People* IF your filing status is...\n"
            "THEN your standard deduction is...\n"
            "Single or Married filing separately $14,600 Married filing jointly 29,200 Head of household 21,900\n"
            "* Don't use this chart if you were born before January 2, 1960, are blind, or if someone "
            "else can claim you.\n"
            "Standard Deduction Chart for People Born Before January 2, 1960, or Who Are Blind* Check the\n"
            "correct number of boxes below. Then go to the chart. Standard deduction for a head of "
            "household who is blind.")
    quotes = select_quotes("What is the 2024 standard deduction for a head of household in the chart for most "
                           "people?", [Hit(_page("p255", text, 1, 255), 1.0, 1)], embed, flat_idf)
    assert "21,900" in _shown(quotes), [q.text for q in quotes]


BALANCE = ("Scenario II\nTrust Fund Balances Precluded From Obligation\n\nYear 1\n\n"
           "Proprietary Pre-Closing Trial Balance (FACTS I Trial Balance):\n\n1010\n\n275\n\n6100\n\n775\n\n"
           "1,050\n\n1,050\n\nProprietary Closing Entries:\n\nC1. To record the closing of revenues and expenses.")


def test_a_pdf_lead_in_takes_the_column_of_figures_it_announces():
    """A table read column by column: the lead-in, then one bare figure a line. Alone the
    lead-in answers nothing (and ends in a colon, which scores it down); with its figures it
    is one quotable unit. A note's paragraphs are read as they are."""
    from ragcli.retrieve.units import split_units

    units = split_units(Hit(_page("p25", BALANCE, 1, 25), 1.0, 1))
    column = next(u for u in units if u.kind == "block")
    assert column.text.startswith("Proprietary Pre-Closing Trial Balance (FACTS I Trial Balance):\n1010\n275")
    assert column.text.endswith("775\n1,050\n1,050") and (column.line_start, column.line_end) == (6, 18)
    assert not any(u.text.startswith("Proprietary Closing Entries:\n") for u in units)  # no figures follow
    note = Chunk("n", "/v/Budget.md", "Budget", "Budget", BALANCE, 1, 1 + BALANCE.count("\n"))
    assert not any(u.kind == "block" for u in split_units(Hit(note, 1.0, 1)))


def test_a_pdf_lead_in_is_never_completed_from_another_page():
    """A PDF's lines count from 1 on every page: the paragraph at the next line number of
    another page is not what a lead-in announces."""
    from ragcli.retrieve.rule_before import complete_lead_ins
    from ragcli.types import Quote

    other = _page("p36", "entities such as the Internal Revenue Service collect these receipts.", 24, 36)
    lead = Quote(1, "Proprietary Pre-Closing Adjusted Trial Balance (FACTS I ATB):", "line", "/r/report.pdf",
                 TITLE, TITLE, 23, 23, 35, 0.7)
    assert complete_lead_ins([lead], lambda _p, _h: [other]) == [lead]
    same = _page("p35", "The receipts are deposited.", 24, 35)
    led = complete_lead_ins([lead], lambda _p, _h: [other, same])[0]
    assert led.kind == "block" and "deposited" in led.text


def test_the_same_sentence_at_other_lines_takes_one_place(embed):
    """Two chunks of one page overlap and hold the same sentence at other lines: it was chosen
    twice, and the second was then dropped as a repeat, leaving a place empty."""
    same = "The improper payments rate for the Retirement Program was .37 percent, below the 1.5 percent threshold."
    hits = [Hit(_page("a", same, 41, 29), 1.0, 1), Hit(_page("b", same, 56, 29), 0.9, 2),
            Hit(_page("c", "Definition: the rate of improper payments in the retirement program is the number of "
                           "payments made in error divided by all payments.", 39, 149), 0.8, 3),
            Hit(_page("d", "Improper payments in the retirement program totalled $304 million in FY 2016, a rate "
                           "of .37%.", 30, 92), 0.7, 4)]
    quotes = select_quotes("What was the improper payment rate in the retirement program in 2016?", hits, embed,
                           flat_idf)
    texts = [q.text for q in quotes]
    assert len(texts) == 3 and texts.count(same) == 1, texts


def test_a_reports_table_of_contents_is_no_quote():
    """A contents entry names what the report covers in the reader's words ("... to meet their
    missions") and took the place of "and did that meet the goal?"; it answers nothing. A
    note's line of dots (an ellipsis drawn out, a code sample) is left as it is."""
    from ragcli.retrieve.units import split_units

    toc = ("Strategic Goal 3: Improve integrity . . . . . . . . . . . . . . . . . . . . . . .32\n\n"
           "Strategic Goal 4: Provide innovative solutions to enable agencies to meet their missions "
           ". . . . . . . . . . . . . . . . . .36\n\n"
           "OPM met 4 of its 6 strategic goals in fiscal year 2022, one more than the year before.")
    units = split_units(Hit(_page("p2", toc, 1, 2), 1.0, 1))
    assert [u.text for u in units] == ["OPM met 4 of its 6 strategic goals in fiscal year 2022, one more than "
                                       "the year before."]
    # the same page as the reader gives it now, its leaders one mark; a leader to a value is no contents line
    read = toc.replace(" . . . . . . . . . . . . . . . . . . . . . . .32", " \u2026 32").replace(
        " . . . . . . . . . . . . . . . . . .36", " \u2026 36") + "\n\nDeposit Fund \u2026 6000-6999"
    units = split_units(Hit(_page("p2", read, 1, 2), 1.0, 1))
    assert [u.text for u in units] == ["OPM met 4 of its 6 strategic goals in fiscal year 2022, one more than "
                                       "the year before.", "Deposit Fund \u2026 6000-6999"]
    note = Chunk("n", "/v/Goals.md", "Goals", "Goals", toc, 1, 1 + toc.count("\n"))
    assert len(split_units(Hit(note, 1.0, 1))) == 3


def test_the_next_sentence_takes_the_place_of_the_lowest_quote_of_another_page(embed):
    """The cause's sentence names the figure that answers ("In cFE version 6.4.2, this
    requirement was new.") right after the best quote; the quote it replaces is the lowest of
    another page, even when a quote of the best quote's own page scores lower."""
    here = ("The <PLATFORM_DEFINED> exception handler did not get called.\n"
            "In cFE version 6.4.2, this requirement was new.\n"
            "Changes to the PSP (in PSP version 1.3.0) resulted in the failure of this requirement.\n"
            "The exception handler requirement was verified by test on the PSP.")
    elsewhere = "The exception handler requirement is listed with the requirements that failed in this build."
    hits = [Hit(_page("p16", here, 46, 16), 1.0, 1), Hit(_page("p17", elsewhere, 3, 17), 0.9, 2)]
    quotes = select_quotes("Why did the platform-defined exception handler requirement fail?", hits, embed, flat_idf)
    assert "6.4.2" in _shown(quotes), [(q.page, q.text) for q in quotes]


def test_the_next_sentence_leaves_a_row_of_figures_its_place():
    """The lowest quote of another page gives its place to the sentence after the best quote,
    unless it is a table row of figures (the row read with its headers answers a figure
    question: "... — FY 2016 Results: 71.3%; FY 2016 Target: ≥73%"); a row of words does not."""
    from ragcli.retrieve.following import with_next_figure
    from ragcli.retrieve.units import split_units

    long = ("Engagement rose in most agencies last year. More than 70 percent of CHCO organizations raised\n"
            "their scores. Across the government, the survey asked employees about their leaders, their work\n"
            "and their agencies, and the results went to every agency's leadership team in the months after.")
    best = split_units(Hit(_page("p7", long, 9, 7), 1.0, 1))
    row = "PERFORMANCE MEASURE: Engagement Index score — FY 2016 Results: 71.3%; FY 2016 Target: ≥73%"
    words = "CFE_MyEH — Description: The purpose of this test is to verify the exception handler"
    for other, replaced in ((row, False), (words, True)):
        unit = split_units(Hit(_page("p51", other, 72, 51), 0.8, 2))[0]
        units = best + [unit]
        chosen = [(0.9, best[0]), (0.6, unit), (0.5, best[2])]
        shown = [u.text for _s, u in with_next_figure(chosen, units, {}, 3)]
        assert (best[1].text in shown) is replaced and (unit.text in shown) is not replaced, shown


REGISTER = ("Historic Preservation, Interior\n"
            "014X5129 Payments to States from Land Sales, Bureau of Land\n"
            "Management, Interior 94 Stat. 3382\n"
            "014X5130 Indian Arts and Crafts Fund, Departmental Management, Interior 25 U.S.C. 305C\n"
            "014X5132 Range Improvements, Bureau of Land Management, Interior 43 U.S.C. 1751\n"
            "014X5140 Historic Preservation Fund, National Park Service, Interior 16 U.S.C. 470h\n"
            "014 5140 Historic Preservation Fund, National Park Service, Interior 16 U.S.C. 470h")
PROSE = ("For the latest information about developments related to Form 1040 and its\n"
         "instructions, such as legislation enacted after they were published, go to the\n"
         "agency's website, where 12 pages of updates and 3 worksheets for the 2017 tax year are\n"
         "posted with the forms and their instructions for every filer and every preparer")


def test_a_registers_entries_are_quotable_one_by_one(embed):
    """A page of account codes and names runs into one "sentence" (no full stop in seven lines): the
    entry that answers is quoted alone. Prose wrapped over as many lines is not cut into lines."""
    from ragcli.retrieve.evidence import split_units

    hit = Hit(_page("r", REGISTER, 40, 121), 1.0, 1)
    lines = [u for u in split_units(hit) if u.kind == "line"]
    assert [u.line_start for u in lines] == [41, 43, 44, 45, 46]  # the entries, not their wrapped ends
    quotes = select_quotes("What is the account symbol for the Historic Preservation Fund?", [hit], embed,
                           flat_idf)
    assert quotes[0].text.startswith("014") and "Historic Preservation Fund" in quotes[0].text
    assert quotes[0].line_start == quotes[0].line_end
    prose = Hit(_page("p", PROSE, 10, 1), 1.0, 1)
    assert not [u for u in split_units(prose) if u.kind == "line"]


def test_a_word_the_layout_broke_is_quoted_whole():
    """"legisla-" at a line's end and "tion" on the next are the word "legislation", as the reader
    reads it; "Government-" + "wide" keeps its hyphen (no word "governmentwide"), and so does
    "short- and long-term" inside a line. A note's text is never rejoined."""
    from ragcli.retrieve.evidence import split_units

    text = ("The Instructions for Form 1040 are being re-\nvised and reissued due to recent legisla-\n"
            "tion that extended certain tax benefits for the holi- day season. Both short- and\n"
            "long-term gains are reported Government-\nwide.")
    units = split_units(Hit(_page("h", text, 6, 6), 1.0, 1))
    said = " ".join(u.text for u in units)
    assert "being revised and reissued due to recent legislation that extended" in said, said
    assert "for the holiday season" in said and "short- and long-term" in said
    assert "reported Government-wide." in said
    first = next(u for u in units if u.text.startswith("The Instructions"))
    assert (first.line_start, first.line_end) == (6, 8)
    note = Chunk("n", "/v/Note.md", "Note", "Note", "recent legisla-\ntion of the year", 3, 4)
    assert "legisla- tion" in " ".join(u.text for u in split_units(Hit(note, 1.0, 1)))


def test_the_next_items_label_does_not_end_an_item():
    """A lettered list in a PDF runs on line by line, and the sentence splitter ended each item with
    the next one's label: "Approve ... the Incident Action Plan (IAP); j."."""
    from ragcli.retrieve.evidence import split_units

    text = ("i. Approve and authorize the implementation of the Incident Action Plan (IAP);\n"
            "j. Ensure that adequate safety measures are in place; and\n"
            "k. Maintain the Unit/Activity Log (ICS 214 form). Review the common responsibilities of\n"
            "the section; b. Brief relief personnel on the current conditions.")
    said = [u.text for u in split_units(Hit(_page("l", text, 17, 87), 1.0, 1))]
    assert "Approve and authorize the implementation of the Incident Action Plan (IAP);" in said, said
    assert "Ensure that adequate safety measures are in place; and" in said, said
    assert "Review the common responsibilities of the section;" in said, said
    assert not [s for s in said if re.search(r"\s[a-z]\.$", s)], said


def test_a_tables_line_of_figures_alone_is_read_in_no_time(tmp_path):
    """A tax table's row band is a line of figures and no word ("6,357 5,713 50,250 ..."). Whether
    a line opens a register's entry was read by a pattern that tried every split of the run into
    codes: with 32 figures `rag ask -k 7` over Publication 17 never came back. Read in a child
    with a minute to spare, so a slow pattern fails this test rather than hanging the suite."""
    import subprocess
    import sys

    code = ("from ragcli.retrieve.pdf_lines import listing_entries\n"
            "row = ' '.join(['6,357', '5,713', '50,250', '50,300'] * 8)\n"
            "print(len(listing_entries([row] * 4 + ['014X5140 Historic Preservation Fund'] * 4, 10)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"  # the entries still are, the figures' lines are not


def test_a_line_that_opens_with_a_ligature_after_a_broken_word_is_read():
    """BART's paper has "dif-" at a line's end and the next line opening with "ﬁcult" ("ﬁ" is one
    character, lower case, not ASCII): `rag ask "What is BART pre-trained with?"` ended in
    "unexpected AttributeError". The ligature is read as its letters, so the word is whole again;
    a line opening with other letters than ASCII ones is kept apart."""
    from ragcli.retrieve.pdf_lines import pdf_lines_joined

    assert pdf_lines_joined(["have been dif-", "ﬁcult to perform"]) == ("have been difﬁcult to perform", [0, 13])
    for first in ("étude of the corpus", "αβ values"):
        text, offsets = pdf_lines_joined(["the model was pre-", first])
        assert text == f"the model was pre- {first}" and offsets == [0, 19]
    assert pdf_lines_joined(["recent legisla-", "tion that"])[0] == "recent legislation that"


def test_quotes_of_a_report_of_another_year_than_asked_are_left_out():
    """Asked of the 2024 Publication 17, the 2017 Form 1040 instructions' filing table (the same rows,
    other figures) was quoted beside it; a note's quote, whose heading names no year, always stays,
    and nothing is left out when no quote is of the year asked."""
    from ragcli.retrieve.periods import of_the_years_asked
    from ragcli.types import Quote

    def quote(n, title, about, text, path="/r/a.pdf"):
        return Quote(n, text, "sentence", path, title, f"{title} > {about}", 1, 1, 3, 0.6)

    pub17 = quote(1, "Publication 17 (2024), Your Federal Income Tax", "Internal Revenue Service (IRS) · 2024",
                  "Single, under 65: $14,600.")
    i1040 = quote(2, "2017 Instruction 1040", "Internal Revenue Service (IRS) · 2017", "Single, under 65: $10,400.",
                  "/r/b.pdf")
    note = Quote(3, "File early.", "sentence", "/v/Taxes.md", "Taxes", "Taxes > Filing", 4, 4, None, 0.5)
    asked = "Under the 2024 filing requirement table, what gross income makes a single filer file?"
    shown = of_the_years_asked([pub17, i1040, note], asked)
    assert [q.text for q in shown] == [pub17.text, note.text] and [q.n for q in shown] == [1, 2]
    assert of_the_years_asked([i1040, note], asked) == [i1040, note]
    assert of_the_years_asked([pub17, i1040], "What gross income makes a single filer file?") == [pub17, i1040]
