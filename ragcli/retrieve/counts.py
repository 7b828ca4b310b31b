"""A count or a total asked for, read from a sentence among a report's quotes: the direct
answer when no table row gives it (``figures.direct_figure`` does, when one does).

"How many page views did the Future of Work website get?" is answered in the text, not in a
table: "... received more than 265,000 page views". A report states a count before the thing
it counts, so the figure whose next few words name what the question counts ("page views")
answers it. A total is stated after its word ("a total of 1,234", "totalled $5 million").

A report's numbers are as often names as counts: "Strategy 7.03", "line 22", "Table 10-1",
"Form 5405", "cFE 6.5.0", a year. A number that follows a naming word, has a decimal part or
is a year is no count. Nothing is said when the quotes give two different counts of the thing
asked (a guess is worse than the quotes alone), nor for a note: only PDF pages are read, as
only reports were measured (bench/ISSUE20.md, session 7).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..types import Quote
from ..words import query_terms

# the words after "how many" up to the verb or preposition that ends the thing counted
_HOW_MANY = re.compile(r"\bhow many\s+(?P<thing>(?:(?!(?:did|do|does|were|was|are|is|have|has|had|will|would|can|"
                       r"could|in|of|for|on|at|to|by|from|with|during|under|per|according)\b)[\w'’-]+\s*){1,4})",
                       re.I)
# "How many data centers did OPM plan to consolidate down to": the end of a change, which a report
# states after "to" ("from nine to two"); the count before the thing ("the nine data centers that
# it operates") is where the change starts
_CHANGE_END = re.compile(r"\b(?:down|up)\s+to\b", re.I)
_WHAT_TOTAL = re.compile(r"\bwhat (?:was |is )?(?:the )?total\b|\bhow much\b.*\bin total\b|\btotal (?:number|amount)\b",
                         re.I)
# a count: digits (with thousands commas) or a small number in words, not part of a decimal or a range of ids
_NUMBER = re.compile(r"(?<![\w.,$-])(\d{1,3}(?:,\d{3})+|\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                     r"twelve)(?![\w%]|[.,-]\d)", re.I)
_TOTAL = re.compile(r"\b(?:a |the )?total(?:s|ed|led|ing|ling)?(?: of)?\s+(?:about |approximately |more than |over )?"
                    r"(\$?\d{1,3}(?:,\d{3})+|\$?\d+)(?![\w%]|[.,-]\d)", re.I)
# a number right after one of these names a thing ("Strategy 7.03", "line 22", "Form 5405", "cFE 6.5.0")
_ID = (r"strategy|strategic goal|goal|objective|table|line|lines|page|pages|p\.|form|forms|section|figure|chapter|"
       r"part|item|schedule|step|appendix|exhibit|scenario|no\.|#|publication|pub\.|account|title|rule|"
       r"executive order")
_IDS = re.compile(rf"\b(?:{_ID})\s*$", re.I)
# ... and for a count, a version, a year or a period too ("cFE 6.5.0", "FY 2016"), which can be
# the figure a sentence states ("In cFE version 6.4.2, ...") but counts nothing
_NAMING = re.compile(rf"\b(?:{_ID}|version|release|build|cfe|number|fy|fiscal year|year|q[1-4])\s*$", re.I)
_ANY_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)*")
# said with the count, or the count says more than the report ("more than 265,000 page views")
_QUALIFIER = re.compile(r"\b(?:more than|over|about|nearly|almost|approximately|roughly|at least|at most|fewer than|"
                        r"less than|up to|under|some)\s+$", re.I)
# what is said of a count ends at the next figure, sentence, clause or bullet
_CLAUSE_END = re.compile(r"\d|[.;:•\uf0b7\n]")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
WORDS_AFTER = 4  # how far after the figure the thing counted may be named ("265,000 Future of Work page views")


@dataclass(frozen=True)
class Count:
    """A count (or total) stated in one quote, and the words that say what it counts."""

    value: str
    words: str  # the quote's own words from the figure to the thing counted
    n: int
    clause: frozenset[str] = frozenset()  # the words after it, to the clause's end: what is said of it
    named: frozenset[str] = frozenset()  # the quote's words (its heading's "EXECUTIVE SERVICES", say)

    def sentence(self) -> str:
        return f"{self.words} [{self.n}]."


def direct_count(question: str, quotes: Sequence[Quote]) -> Count | None:
    """The count the question asks for, from a sentence of a PDF page among ``quotes``; None
    when none states it or they state different ones."""
    if _CHANGE_END.search(question):
        return None
    match = _HOW_MANY.search(question)
    thing = query_terms(match["thing"]) if match else set()
    head = _head(match["thing"]) if match else ""
    if not head and not _WHAT_TOTAL.search(question):
        return None
    found = [c for q in quotes if q.page is not None
             for c in (_counts_of(q, head, thing) if head else _totals_of(q))]
    # "111 requirements passed demonstration; 25 requirements were validated by analysis": the
    # count of which the question's other words are said ("validated by analysis") is the one
    # asked; then the one in the quote that names the thing whole ("Executive Services", not "Time")
    rest = query_terms(question) - thing
    said = {c: (len(rest & c.clause), len(thing & c.named)) for c in found}
    found = [c for c in found if said[c] == max(said.values())]
    if len({c.value for c in found}) != 1:
        return None
    return found[0]


def _counts_of(quote: Quote, head: str, thing: set[str]) -> list[Count]:
    """Each count in the quote whose next few words name the thing counted by its head noun
    ("page views" by "views": "page" alone names a page number's page), with none but the
    thing's own words between ("18 Procedure Description Requirements" is a page number and a
    heading)."""
    out = []
    for m in _NUMBER.finditer(quote.text):
        if _names_something(quote.text, m):
            continue
        after = list(re.finditer(r"[\w'’-]+", quote.text[m.end():]))[:WORDS_AFTER]
        word = next((w for w in after if query_terms(w.group(0)) == {head}), None)
        between = query_terms(quote.text[m.end():m.end() + word.start()]) if word is not None else set()
        if word is not None and between <= thing:
            qualifier = _QUALIFIER.search(quote.text[:m.start()])
            start = qualifier.start() if qualifier else m.start()
            clause = _CLAUSE_END.split(quote.text[m.end() + word.end():], maxsplit=1)[0]
            out.append(Count(m.group(1), re.sub(r"\s+", " ", quote.text[start:m.end() + word.end()]), quote.n,
                             frozenset(query_terms(clause)), frozenset(query_terms(quote.text))))
    return out


def _totals_of(quote: Quote) -> list[Count]:
    """Each total the quote states in so many words ("a total of 1,234", "totalled $5 million")."""
    return [Count(m.group(1), m.group(0).strip(), quote.n) for m in _TOTAL.finditer(quote.text)]


def _head(thing: str) -> str:
    """The thing counted's head noun: the last of its content words as the question gives them."""
    terms = [t for w in re.findall(r"[\w'’-]+", thing) for t in query_terms(w)]
    return terms[-1] if terms else ""


def states_figure(text: str) -> bool:
    """Does the text state a figure, not only name a thing by its number ("As stated in the
    Strategy 7.03 Progress Update", "enter it on line 22")? A year states one ("in 2008")."""
    return any(not _IDS.search(text[max(0, m.start() - 24):m.start()]) for m in _ANY_NUMBER.finditer(text))


def _names_something(text: str, m: re.Match[str]) -> bool:
    """Is the number a name, not a count: a year, or after a naming word ("Strategy 7.03")?"""
    return bool(_YEAR.match(m.group(1)) or _NAMING.search(text[max(0, m.start() - 24):m.start()]))
