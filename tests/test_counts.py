"""A count or total asked for, said first from a report's sentence (retrieve/counts.py)."""

from __future__ import annotations

from ragcli.retrieve.counts import direct_count
from ragcli.types import Quote


def _quote(n: int, text: str, page: int | None = 14) -> Quote:
    path = "/r/report.pdf" if page is not None else "/v/Note.md"
    return Quote(n, text, "line", path, "Report", "Report", 1, 1, page, 0.7)


def test_the_count_before_the_thing_counted_is_the_answer_with_its_qualifier():
    asks = "How many page views did OPM's Future of Work website get in fiscal year 2022?"
    quotes = [_quote(1, "OPM launched a Future of Work website that received more than 265,000 page views in "
                        "FY 2022.")]
    assert direct_count(asks, quotes).sentence() == "more than 265,000 page views [1]."


def test_ids_years_and_page_numbers_are_no_counts():
    """"Strategy 7.03", "line 22", a year, a page number before a heading: none counts views or
    requirements, so nothing is said."""
    asks = "How many page views did the website get?"
    quotes = [_quote(1, "As stated in the Strategy 7.03 views update, see line 22 views and 2022 views."),
              _quote(2, "18 Procedure Description Page views")]
    assert direct_count(asks, quotes) is None
    reqs = "How many Event Services requirements did NASA test?"
    assert direct_count(reqs, [_quote(1, "5.1.2 Procedure Description 18 Procedure Description Requirements")]) is None


def test_the_count_of_which_the_question_says_the_rest_and_names_the_thing():
    """"validated by analysis" picks 25 of the ES summary; the TIME summary's "1 requirement was
    validated by analysis" names another subsystem."""
    es = _quote(1, "5.1 EXECUTIVE SERVICES (ES) During this build test of the ES subsystem: 111 requirements "
                   "passed demonstration 25 requirements were validated by analysis. 5 requirements failed.")
    time = _quote(2, "5.2 TIME SERVICES (TIME) During this build test: 32 requirements passed demonstration "
                     "1 requirement was validated by analysis 6 requirements were deferred")
    asks = "How many Executive Services requirements were validated by analysis in NASA's cFE 6.5.0 build test?"
    assert direct_count(asks, [es, time]).value == "25"


def test_two_counts_alike_say_nothing_and_a_note_is_not_read():
    asks = "How many page views did the website get?"
    both = [_quote(1, "The site got 2,000 page views."), _quote(2, "The site got 3,000 page views.")]
    assert direct_count(asks, both) is None
    assert direct_count(asks, [_quote(1, "The site got 2,000 page views.", page=None)]) is None


def test_a_total_is_said_after_its_word():
    asks = "What total did the program's payments reach in 2016?"
    total = [_quote(1, "Payments reached a total of 1,234 in FY 2016.")]
    assert direct_count(asks, total).value == "1,234"
    assert direct_count("What did the program pay?", total) is None  # asks no total


def test_a_number_that_names_a_thing_states_no_figure():
    """The sentence after a quote is taken when it states a figure: "As stated in the Strategy
    7.03 Progress Update" and "line 22" name a strategy and a line; a year, an amount and a
    version are figures ("In cFE version 6.4.2, this requirement was new")."""
    from ragcli.retrieve.counts import states_figure

    assert not states_figure("As stated in the Strategy 7.03 Progress Update, OPM partnered with GSA.")
    assert not states_figure("Enter the amount from Form 1040, line 22.")
    assert states_figure("In FY 2017, OPM will establish an Executive Steering Committee.")
    assert states_figure("The threshold will lower to more than $2,500.")
    assert states_figure("In cFE version 6.4.2, this requirement was new.")


def test_the_end_of_a_change_is_not_the_count_before_the_thing():
    asks = "How many data centers did OPM plan to consolidate down to, according to its 2016 report?"
    quote = _quote(1, "OPM should consolidate the nine data centers that it currently operates to two strategic "
                      "locations.")
    assert direct_count(asks, [quote]) is None
    assert direct_count("How many data centers does OPM operate?", [quote]).value == "nine"
