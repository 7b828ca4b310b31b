"""Quotes of the year asked: on a shelf of one organisation's reports, "Under the 2024 filing
requirement table in IRS Publication 17, what gross income ...?" was answered beside the 2017
Form 1040 instructions' table, the same rows with other figures. A report's year is in every one
of its chunks' heading (its title and ``pdf_about.About.line``: "Annual Performance Report Fiscal
Year 2016 › ... · FY 2016, FY16")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..types import Quote

_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def of_the_years_asked(quotes: Sequence[Quote], question: str) -> list[Quote]:
    """The quotes less those of a document of another year than the question names, when a quote
    of a document of that year is shown: a quote whose heading names years, none of them asked,
    and whose text names none either. Notes, whose headings name no year, are never left out."""
    asked = set(_YEAR.findall(question))
    if not asked:
        return list(quotes)
    years = [set(_YEAR.findall(q.heading)) for q in quotes]
    if not any(y & asked for y in years):
        return list(quotes)
    kept = [q for q, y in zip(quotes, years) if not y or y & asked or set(_YEAR.findall(q.text)) & asked]
    if len(kept) == len(quotes):
        return list(quotes)
    return [replace(q, n=n) for n, q in enumerate(kept, 1)]
