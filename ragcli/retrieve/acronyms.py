"""The acronyms a question spells out, as the notes define them.

Reports define a name once and use its initials after: "Federal Employees Health Benefits
(FEHB)", then "FEHB premiums increased to $503.35". A reader asks in the long form ("by how
much did federal employee health benefit premiums go up?"), so the page that answers holds
none of the question's longer words but "premiums", and neither search side finds it. A run
of the question's words whose initials some note writes right after (or right before) that
run, as one phrase, is a name the notes shorten: the initials join the keyword query. Only
a definition found in the index counts, so "how many" is never read as "HM".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .fusion import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)  # as the keyword query splits words (fusion.fts_query)

# words a name's initials may leave out ("Office of Personnel Management": OPM)
CONNECTORS = frozenset({"of", "and", "for", "the", "on", "in", "to"})
MAX_WORDS = 6  # the longest run read as one name
# two letters name too many things ("BC", "PK" in a paper's abstract); three or more, few
MIN_LETTERS = 3


def _initials(run: Sequence[str]) -> set[str]:
    every = "".join(w[0] for w in run)
    return {every, "".join(w[0] for w in run if w not in CONNECTORS)}


def spelled_out(question: str, holds_phrase: Callable[[Sequence[str]], bool]) -> list[str]:
    """The initials (lower case) of each run of the question's words that a note defines
    them by: the run, then its initials, as one phrase ("... benefits (FEHB)"), or the
    other way round. The longest such run wins, and the words inside it start no other
    ("AMP-activated protein kinase" is not also "PK"). ``holds_phrase`` asks the keyword
    index."""
    words = _WORD.findall(question.lower())
    known: dict[str, bool] = {}  # initials -> is it a word of some chunk at all
    found: list[str] = []
    start = 0
    while start < len(words):
        end = _defined_run(words, start, known, found, holds_phrase)
        start = end if end else start + 1
    return found


def _defined_run(words: list[str], start: int, known: dict[str, bool], found: list[str],
                 holds_phrase: Callable[[Sequence[str]], bool]) -> int:
    """The end of the longest run from ``start`` whose initials a note defines (appended to
    ``found``), or 0."""
    if words[start] in STOPWORDS or not words[start].isalpha():
        return 0
    runs = []
    for end in range(start + 2, min(len(words), start + MAX_WORDS) + 1):
        run = words[start:end]
        if any(w in STOPWORDS and w not in CONNECTORS or not w.isalpha() for w in run):
            break  # a name does not run on through "did" or "2016"
        if run[-1] not in STOPWORDS:
            runs.append((end, run))
    for end, run in reversed(runs):
        for letters in sorted(_initials(run)):
            if len(letters) < MIN_LETTERS or letters in words or letters in found:
                continue
            if letters not in known:
                known[letters] = holds_phrase([letters])
            if known[letters] and (holds_phrase([*run, letters]) or holds_phrase([letters, *run])):
                found.append(letters)
                return end
    return 0
