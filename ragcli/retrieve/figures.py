"""A figure asked for, read from a table row among the quotes: the direct answer, with its
unit and period.

A PDF page's table rows read "Label — Header: value; Header: value; ..." (ingest/pdf_ruled.py,
ingest/pdf_tables.py): the header carries the period ("FY 2016 Results", "Three Months Ended
June 30, 2024") and often the unit, the value its sign ("$", "%"). So a figure needs no model
to be said: the row whose label and header share the most words with the question gives it,
when the question names no period or the header names every one it does. The answer is the row
as printed, cut to that cell ("71.3% — OPM's ... Engagement Index score, FY 2016 Results
[1]"): every word of it is in the quote it cites.

Words count by their idf in the index when it is given (``idf``, as the evidence weighs
them): the word that tells the rows apart ("deferred", "Event") is rare, the words every row
and the title repeat ("requirements", "core Flight Executive") are common.

It says nothing for a question that asks no figure (``asks_for_figure``: "how many", "what
share", "what ... score"), and nothing when no row is clearly the one asked about: fewer than ``MIN_SHARED`` words
in common, two rows sharing as much, or a row whose label the question does not name: with
fewer than two of its words (or its only word), or no more than another row's (the label is
what tells rows apart: "Executive Services (ES)" is not asked about because the question
says "services", as every row's label does). A guess is worse than the quotes alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..ingest.pdf_tables import ROW, is_figure
from ..types import Hit, Quote
from .rows import pipe_cells
from .units import split_units
from ..words import asks_figure, query_terms

MIN_SHARED = 2  # question words a row's label and header must share with the question
# A row the evidence did not choose is quoted only when the question names it at length: this
# many of its label's words, besides the report's title and heading. Tuned on the reports set's
# tune half (bench/bench_answers2.py --report-files '[no]*[t2].pdf'): the rows it rightly added
# were named by 5-6 words, the wrong ones ("how many ... by analysis" given the Passed count,
# a website's page views given a CHCO survey share) by 2.
NAMED_AT_LENGTH = 4
_ROW = re.compile(r"^(?P<label>.+?) — (?P<cells>.+)$")
_CELL_SEP = "; "
_BRACKETS = re.compile(r"\(([^()]*)\)")
# "How many contract actions met ..." asks a count: a row's "51.90%" is not one (the text's "219
# of 422" is), unless the question asks a share as well ("..., and what was the response rate?")
_COUNT = re.compile(r"\bhow many\b", re.I)
_SHARE = re.compile(r"\b(?:percent(?:age)?s?|share|rate|proportion|ratio|fraction)\b|%", re.I)
# the periods a question and a header name: years (fiscal or not), quarters, months-ended spans
_PERIOD = re.compile(r"\b(?:fy ?|fiscal (?:year )?)?((?:19|20)\d\d)\b|\b(q[1-4])\b|"
                     r"\b(first|second|third|fourth) quarter\b|\b(three|six|nine|twelve) months\b", re.I)
_QUARTERS = {"first": "q1", "second": "q2", "third": "q3", "fourth": "q4"}
# "what share of ...", "what ... index score ...": the figure nouns a table's cells answer, beyond
# words.asks_figure's quantities and times ("how many", "what percentage")
_WHAT_FIGURE = re.compile(r"\b(?:what|which)\b(?:\s+[\w'’(),-]+){0,8}?\s+(?:share|score|percent(?:age)?|"
                          r"proportion|rate|number|amount|total|count|average|level|value|cost|price|"
                          r"balance|limit|results?)s?\b", re.I)


@dataclass(frozen=True)
class Figure:
    """One cell of one table row: what it is (label, header) and its value."""

    value: str
    label: str
    header: str
    n: int  # the quote that holds the row
    shared: int  # question words the label and header share
    weight: float = 0.0  # the same words, each by its idf (1 each without one)
    named: float = 0.0  # the weight of those words in the label alone
    label_named: bool = False  # the question holds two of the label's words, or its only one

    def sentence(self) -> str:
        return f"{self.value} — {self.label}, {self.header} [{self.n}]."


def direct_figure(question: str, quotes: Sequence[Quote],
                  idf: Callable[[list[str]], dict[str, float]] | None = None) -> Figure | None:
    """The figure the question asks for, from a table row among ``quotes``; None when no row
    is clearly it."""
    if not asks_for_figure(question):
        return None
    asked = query_terms(_PERIOD.sub(" ", question))
    counts = bool(_COUNT.search(question)) and not _SHARE.search(question)
    weights = {t: w + 1.0 for t, w in idf(sorted(asked)).items()} if idf is not None and asked else {}
    periods = _periods(question)
    found: list[Figure] = []
    for quote in quotes:
        around = query_terms(_PERIOD.sub(" ", f"{quote.title} {quote.heading}"))
        for line in row_lines(quote.text):
            match = _ROW.match(line)
            if match:
                cells = _cells(match["label"], match["cells"], quote.n, asked, periods, weights, around, question)
                found += [f for f in cells if not (counts and "%" in f.value)]
    if not found:
        return None
    found.sort(key=lambda f: -f.weight)
    best = found[0]
    # another row is a rival when it gives another figure: a summary table and the measure's own
    # page repeat one row ("Number of tribes ..." and "PERFORMANCE MEASURE: Number of tribes ...")
    others = [f for f in found if f.label != best.label and f.value != best.value]
    rival = next((f for f in others if f.weight >= best.weight - 1e-9), None)
    named_too = any(f.named >= best.named - 1e-9 for f in others)
    if best.shared < MIN_SHARED or rival is not None or not best.label_named or named_too:
        return None
    return best


def quote_the_row(question: str, quotes: Sequence[Quote], hits: Sequence[Hit],
                  idf: Callable[[list[str]], dict[str, float]] | None = None) -> list[Quote]:
    """The quotes, and the table row that clearly gives the figure asked for when none of them
    does but a row of the retrieved chunks (their pages' rows included) does, and the question
    names it at length (``NAMED_AT_LENGTH``): a row scores low beside the sentences around it
    (a run of labels and figures reads like no question), yet it is the answer. It is quoted
    after the quotes of its page, or last, and all are renumbered; its score is the lowest
    quote's, so it makes no question look better answered."""
    if not quotes or direct_figure(question, quotes, idf) is not None:
        return list(quotes)
    rows = [u for hit in hits for u in split_units(hit) if u.kind == "item" and _ROW.match(u.text)]
    candidates = [Quote(0, u.text, u.kind, u.chunk.path, u.chunk.title, u.chunk.heading, u.line_start,
                        u.line_end, u.chunk.page, min(q.score for q in quotes)) for u in rows]
    numbered = [replace(q, n=-k) for k, q in enumerate(candidates, 1)]
    figure = direct_figure(question, numbered, idf)
    if figure is None:
        return list(quotes)
    row = candidates[-figure.n - 1]
    context = query_terms(_PERIOD.sub(" ", f"{row.title} {row.heading}"))
    named = query_terms(_PERIOD.sub(" ", question)) & _label_terms(figure.label, question) - context
    if len(named) < NAMED_AT_LENGTH:
        return list(quotes)
    if any(q.path == row.path and q.page == row.page and q.line_start <= row.line_start
           and row.line_end <= q.line_end and row.text in q.text for q in quotes):
        return list(quotes)  # quoted already, inside a larger quote (a list with its lead-in)
    place = max((k + 1 for k, q in enumerate(quotes) if (q.path, q.heading, q.page) ==
                 (row.path, row.heading, row.page)), default=len(quotes))
    merged = list(quotes[:place]) + [row] + list(quotes[place:])
    return [replace(q, n=k) for k, q in enumerate(merged, 1)]


# a Markdown table: its header, the rule under it, then its rows
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?$")


def row_lines(text: str) -> list[str]:
    """The quote's table rows as a PDF page's rows read ("Label — Header: value; ..."): its
    PDF rows as they are, and each row of a Markdown table with its first cell as the label and
    the column headers ("| Espresso | 8 |" under "| Brew | Clicks |" is "Espresso — Clicks: 8"),
    so a note's table answers "how many clicks for espresso" as a report's does."""
    lines = [line.strip() for line in text.splitlines()]
    out: list[str] = []
    header: list[str] | None = None
    for k, line in enumerate(lines):
        if not line.startswith("|"):
            header = None
            out.append(line.removeprefix(ROW.strip()).strip())
        elif k + 1 < len(lines) and _TABLE_RULE.match(lines[k + 1]):
            header = pipe_cells(line)
        elif header is not None and not _TABLE_RULE.match(line):
            label, *values = pipe_cells(line)
            cells = [f"{h}: {v}" for h, v in zip(header[1:], values) if h and v]
            if label and cells:
                out.append(f"{label} — {_CELL_SEP.join(cells)}")
    return out


def asks_for_figure(question: str) -> bool:
    """Does the question ask for a figure a table cell could hold?"""
    return asks_figure(question) or bool(_WHAT_FIGURE.search(question))


def _cells(label: str, cells: str, n: int, asked: set[str], periods: set[str],
           weights: dict[str, float], around: set[str] = frozenset(), question: str = "") -> list[Figure]:
    """The row's figures whose header fits the periods asked, each scored by the words its
    label and header share with the question. A row's first figure of the period wins its
    ties ("FY 2016 Results" before "FY 2016 Target"): a result is asked more than a target.
    None when the column would be a guess (``_column_named``)."""
    out: list[Figure] = []
    label_terms = _label_terms(label, question)
    named = sum(weights.get(t, 1.0) for t in asked & label_terms)
    label_named = _names_label(asked, label, question)
    figures = [(h, v) for h, sep, v in (c.rpartition(": ") for c in cells.split(_CELL_SEP)) if sep and is_figure(v)]
    fitting = [(h, v) for h, v in figures if periods <= _periods(h)]
    headers = [query_terms(_PERIOD.sub(" ", h)) for h, _v in fitting]
    if not _column_named(asked, periods, headers, label_terms | around, weights):
        return []
    for (header, value), header_terms in zip(fitting, headers):
        shared = asked & (label_terms | header_terms)
        weight = sum(weights.get(t, 1.0) for t in shared)
        if not any(f.weight >= weight - 1e-9 for f in out):
            out.append(Figure(value, label, header, n, len(shared), weight, named, label_named))
    return out


def _names_label(asked: set[str], label: str, question: str = "") -> bool:
    """Does the question name the row: two of its label's words (or its only one)? A short name
    in brackets is the same name again ("Tables (TBL)"): the words before it name the row, or
    the short name alone does ("Table Services" names "Tables (TBL)"; it names "Executive
    Services (ES)" by one word of two, which is no more than every "... Services" row)."""
    name = query_terms(_PERIOD.sub(" ", _BRACKETS.sub(" ", label))) | _spelled_out(label, question)
    short = query_terms(" ".join(_BRACKETS.findall(label)))
    if short and short <= asked:
        return True
    return len(asked & name) >= min(MIN_SHARED, len(name)) > 0


def _label_terms(label: str, question: str) -> set[str]:
    """A row label's words, and the question's words its acronyms stand for."""
    return query_terms(_PERIOD.sub(" ", label)) | _spelled_out(label, question)


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
_LINKING = frozenset({"of", "and", "for", "the", "on", "in", "to", "&"})  # "Office of Personnel Management"


def _spelled_out(label: str, question: str) -> set[str]:
    """The question's words that a label's acronym stands for: a row says "participating in
    FEHB" where the reader writes "the federal employees health benefits program". The acronym
    counts as those words when they stand in a row in the question, their initials spelling it
    (linking words like "of" may stand between: OPM, "Office of Personnel Management"). A short
    name in brackets abbreviates the label's own words ("Executive Services (ES)"), not the
    question's: "Event Services" spells ES too."""
    words = re.findall(r"[\w&'’-]+", question)
    found: set[str] = set()
    for acronym in set(_ACRONYM.findall(_BRACKETS.sub(" ", label))):
        for start in range(len(words)):
            run = _initials_run(words[start:], acronym.lower())
            if run:
                found |= query_terms(" ".join(run))
                break
    return found


def _initials_run(words: list[str], letters: str) -> list[str]:
    """The words from the first on whose initials spell ``letters`` (linking words skipped), or []."""
    run: list[str] = []
    for word in words:
        if not letters:
            break
        if word.lower()[0] == letters[0]:
            run.append(word)
            letters = letters[1:]
        elif run and word.lower() in _LINKING:
            continue
        else:
            return []
    return run if not letters else []


def _column_named(asked: set[str], periods: set[str], headers: list[set[str]], explained: set[str],
                  weights: dict[str, float]) -> bool:
    """Does the question say which of the row's figures it asks for? Its period does, or words
    that one header holds more of than any other ("deferred", "in total"). Else the row's
    first figure is a guess, said only when the question asks for nothing the row does not
    name (its label, headers, report title and heading): "How many Software Bus requirements
    were checked by analysis" is not answered by the matrix's "Requirements Tested Passed"
    (its "requirements" is as much in "... Failed" and "... Partially"), as the row has no
    column for analysis; the report's text says it."""
    if periods or len(headers) < 2:
        return True
    said = sorted((sum(weights.get(t, 1.0) for t in asked & h) for h in headers), reverse=True)
    if said[0] > said[1] + 1e-9:
        return True
    return not asked - explained - set.union(*headers)


def _periods(text: str) -> set[str]:
    found = set()
    for year, quarter, ordinal, months in _PERIOD.findall(text):
        found.add(year or quarter.lower() or _QUARTERS.get(ordinal.lower(), "") or months.lower())
    return found - {""}
