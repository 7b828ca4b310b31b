"""The sentence after a quote: where a report gives the figures of what its quote says.

A report says a thing, then its figures in the next sentence, in other words: sharing few of
the question's words, that sentence scores low alone and is not chosen (issue 20).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .units import Unit

_DIGIT = re.compile(r"\d")


def with_next_figure(chosen: list[tuple[float, Unit]], units: Sequence[Unit], overall: dict[int, float],
                     limit: int) -> list[tuple[float, Unit]]:
    """The sentence right after the best quote, when it states a figure, in a place left or in
    the last place when that quotes another page (a page further off says less than this):
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
    if len(chosen) >= limit:  # the last place, when it quotes another page, is worth less than this
        last = min(chosen, key=lambda c: c[0])
        if subject.chunk.page is None or (last[1].chunk.path, last[1].chunk.page) == (subject.chunk.path,
                                                                                      subject.chunk.page):
            return chosen  # a note's section is read whole (its lead-ins completed): no place is taken there
        rest = [c for c in chosen if c is not last]
    else:
        rest = chosen
    said = " ".join(" ".join(u.shown.split()) for _s, u in chosen)  # a quoted paragraph holds it
    after = [k for k, u in enumerate(units)
             if (u.chunk.path, u.chunk.page) == (subject.chunk.path, subject.chunk.page) and u.kind == "sentence"
             and subject.line_end <= u.line_start <= subject.line_end + 1 and follows(u, subject)
             and _DIGIT.search(u.text) and " ".join(u.text.split()) not in said]
    if not after:
        return chosen
    k = min(after, key=lambda j: (units[j].line_start, units[j].hit.rank))
    return rest + [(overall.get(k, min(s for s, _u in chosen)), units[k])]


def follows(unit: Unit, subject: Unit) -> bool:
    """Does ``unit`` come after ``subject``? A PDF line holds several sentences, so where both
    stand in the unit's chunk, their places in its text say it; else its lines must."""
    flat = " ".join(unit.chunk.text.split())
    here, there = flat.find(" ".join(subject.text.split())), flat.find(" ".join(unit.text.split()))
    if here >= 0 and there >= 0:
        return there > here
    return unit.line_start > subject.line_start and unit.line_end >= subject.line_end
