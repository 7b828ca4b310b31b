"""The sentence after a quote: where a report gives the figures of what its quote says, or the
reason for it.

A report says a thing, then its figures (or its cause) in the next sentence, in other words:
sharing few of the question's words, that sentence scores low alone and is not chosen (issue 20).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..ingest.pdf_tables import is_figure
from ..words import gives_reason
from .counts import states_figure
from .units import Unit

_DIGIT = re.compile(r"\d")
# a table row as ingest/pdf_tables.py writes it: "Label — Header: value; Header: value"
_ROW = re.compile(r"^(?:- )?[^\n]+? — (?P<cells>[^\n]+?: [^\n]+)$")


def with_next_figure(chosen: list[tuple[float, Unit]], units: Sequence[Unit], overall: dict[int, float],
                     limit: int) -> list[tuple[float, Unit]]:
    """The sentence right after the best quote, when it states a figure, in a place left, or in
    the last place when that quotes another page (a page further off says less than this), or
    else in the place of the lowest quote of another page when it states a figure that is no id:
    "2024 is the last year to file Form 5405." "The 15-year repayment period ... for homes
    purchased in 2008 ..."; "... a Form 1099-K when ... more than $5,000." "In calendar year
    2025, the threshold will lower to more than $2,500". It takes the last place at its own
    score, so it makes no question look better answered. ``overall``: each unit's score for
    the whole question."""
    if not chosen:
        return chosen
    subject = max(chosen, key=lambda c: c[0])[1]
    if subject.kind != "sentence":
        return chosen
    found = _next_figure(subject, units)
    if found is None:
        return chosen
    k, passed = found
    said = " ".join(" ".join(u.shown.split()) for _s, u in chosen)  # a quoted paragraph holds it
    if " ".join(units[k].text.split()) in said:
        return chosen
    if len(chosen) >= limit:  # the last place, when it quotes another page, is worth less than this
        here = (subject.chunk.path, subject.chunk.page)
        last = min(chosen, key=lambda c: c[0])
        announces = any(u is last[1] for u in passed)  # "THEN your standard deduction is..." before the figures
        if not announces and (subject.chunk.page is None or (last[1].chunk.path, last[1].chunk.page) == here):
            if subject.chunk.page is None:
                return chosen  # a note's section is read whole (its lead-ins completed): no place is taken there
            # else the lowest quote of another page, when the sentence states a figure, not an id
            # ("As stated in the Strategy 7.03 Progress Update", "line 22"), and that quote is no
            # table row of figures (read with its headers, a row gives the figure asked: rp-01's 71.3%)
            others = [c for c in chosen if (c[1].chunk.path, c[1].chunk.page) != here and not _figure_row(c[1].text)]
            if not others or not states_figure(units[k].text):
                return chosen
            last = min(others, key=lambda c: c[0])
        rest = [c for c in chosen if c is not last]
    else:
        rest = chosen
    return rest + [(overall.get(k, min(s for s, _u in chosen)), units[k])]


def _figure_row(text: str) -> bool:
    """Is the text a table row with a figure among its cells ("... — FY 2016 Results: 71.3%; ...")?
    A row of words ("CFE_MyEH — Description: The purpose of this test ...") is read as a sentence."""
    match = _ROW.match(text.strip())
    return bool(match) and any(is_figure(cell.rpartition(": ")[2].strip()) for cell in match["cells"].split("; "))


MAX_PASSED = 3  # announcing sentences and labels walked past to the sentence that states the figure


def _next_figure(subject: Unit, units: Sequence[Unit]) -> tuple[int, list[Unit]] | None:
    """The sentence after ``subject`` that states a figure, and the sentences walked past to it:
    the ones that only announce it (a chart's "IF your filing status is..." "THEN your standard
    deduction is..." before its "Single $14,600 Married filing jointly 29,200 ...") and
    letter-spaced labels ("T a b l e 1 0 - 1 ."), whose digits name the table and state no
    figure. A sentence in the lines right after that states one is taken, as before; none when
    the next says something else."""
    at, passed = subject, []
    for _step in range(MAX_PASSED + 1):
        after = [k for k, u in enumerate(units)
                 if (u.chunk.path, u.chunk.page) == (subject.chunk.path, subject.chunk.page) and u.kind == "sentence"
                 and at.line_end <= u.line_start <= at.line_end + 1 and follows(u, at)]
        after.sort(key=lambda j: (units[j].line_start, units[j].hit.rank))
        stating = [k for k in after if _DIGIT.search(units[k].text) and not _label(units[k].text)]
        if stating:
            return stating[0], passed
        at = units[after[0]] if after else None
        if at is None or not (_label(at.text) or _ANNOUNCES.search(at.text)):
            return None
        passed.append(at)
    return None


# "IF your filing status is...", "THEN your standard deduction is...", "as follows:"
_ANNOUNCES = re.compile(r"(?:\.\.\.|…|:)\s*$")
_WORD = re.compile(r"[^\W\d_]{3,}")


def _label(text: str) -> bool:
    """A letter-spaced heading or a bare number: no word of three letters."""
    return not _WORD.search(text)


def follows(unit: Unit, subject: Unit) -> bool:
    """Does ``unit`` come after ``subject``? A PDF line holds several sentences, so where both
    stand in the unit's chunk, their places in its text say it; else its lines must."""
    flat = " ".join(unit.chunk.text.split())
    here, there = flat.find(" ".join(subject.text.split())), flat.find(" ".join(unit.text.split()))
    if here >= 0 and there >= 0:
        return there > here
    return unit.line_start > subject.line_start and unit.line_end >= subject.line_end


REASON_LINES = 3  # lines after a quote within which the reason it leaves out may start


def with_reason(chosen: list[tuple[float, Unit]], units: Sequence[Unit], overall: dict[int, float],
                limit: int) -> list[tuple[float, Unit]]:
    """For "why did X change": when the best quote gives no reason, the unit that gives one
    ("primarily due to", "offset by") starting within ``REASON_LINES`` after a quote (the best
    first, then the others: "staffing challenges" may be the lesser quote), in any
    retrieved chunk of the same note (and page). The sentence that names X ("engagement
    remained at 71") shares the question's words and is chosen; the next one gives the cause
    in other words ("... were offset by FIS's score, which decreased by two points") and
    alone scores low. It is often in the next chunk, the one it was cut from. It takes the
    last place, at its own score: it makes no question look better answered. A reason given
    by a quote elsewhere ("as a result of the survey", pages away) is no reason for this."""
    ranked = sorted(chosen, key=lambda c: -c[0])
    if not ranked or gives_reason(ranked[0][1].text):
        return chosen
    for _score, subject in ranked:
        k = _reason_after(subject, units)
        if k is None:
            continue
        if any(u is units[k] for _s, u in chosen):
            return chosen
        kept = ranked[: limit - 1] if len(ranked) >= limit else ranked
        return kept + [(overall.get(k, ranked[-1][0]), units[k])]
    return chosen


def _reason_after(subject: Unit, units: Sequence[Unit]) -> int | None:
    """The index of the first unit giving a reason within ``REASON_LINES`` after ``subject``."""
    said = " ".join(subject.text.split())
    near = [k for k, u in enumerate(units)
            if (u.chunk.path, u.chunk.page) == (subject.chunk.path, subject.chunk.page)
            and u.kind in ("sentence", "item", "line") and u is not subject
            and subject.line_end <= u.line_start <= subject.line_end + REASON_LINES
            and " ".join(u.text.split()) not in said and gives_reason(u.text)]
    return min(near, key=lambda j: (units[j].line_start, units[j].hit.rank)) if near else None
