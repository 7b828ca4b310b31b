"""Say each thing once: of the quotes chosen, those another quote already shows are left out.

A quote can stand inside another (an item of a list quoted with its lead-in, a sentence of a
quoted paragraph), repeat another's words (a note embedded in another, both retrieved), or say
what another says in other words (a table row beside the sentence that gives its figures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..words import query_terms
from .units import Unit

_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


def dedupe_contained(chosen: list[tuple[float, Unit]]) -> list[tuple[float, Unit]]:
    """Say each thing once: a quote whose lines lie inside another chosen quote's (an item of a
    list quoted with its lead-in, a sentence of a quoted paragraph), or whose words another
    chosen quote already holds (a note embedded in another, both retrieved), is left to the
    larger quote. Two quotes can each cover the other: a sentence cut at a chunk's end spans
    more lines than the whole sentence of the next chunk, which holds its words. The one with
    more words is kept then, not neither ("The AMT exemption amount is increased to $85,700
    ($133,300 if married filing jointly ...)" was lost so)."""
    shown = [(_span(u), " ".join(u.shown.lower().split()), s, u) for s, u in chosen]

    def covers(j: int, i: int) -> bool:  # does quote j hold quote i?
        (path, a, b), text = shown[i][:2]
        (p, x, y), other = shown[j][:2]
        inside = p == path and x <= a and b <= y and ((x, y) != (a, b) or len(other) > len(text))
        if shown[i][3].kind == shown[j][3].kind == "sentence" and text not in other:
            inside = False  # two sentences of a PDF line: lines are shared, words are not
        return inside or (text in other and (len(other) > len(text) or j < i))

    def left_to(j: int, i: int) -> bool:  # is quote i left to quote j?
        mutual = covers(i, j) and (len(shown[i][1]), -i) > (len(shown[j][1]), -j)
        return covers(j, i) and not mutual

    return [(score, unit) for i, (_span_i, _text, score, unit) in enumerate(shown)
            if not any(left_to(j, i) for j in range(len(shown)) if j != i)]


def said_once(chosen: list[tuple[float, Unit]], question: str = "") -> list[tuple[float, Unit]]:
    """The quotes less those whose every word and figure the others hold, the weakest let go
    first: a part's quote "Maximum file size | 5 MB | 200 MB" beside the FAQ sentence "For the
    Standard plan the limit is 5 MB. For the Plus plan ... 200 MB per file" says it twice."""
    kept = list(chosen)
    best = max(chosen, key=lambda c: c[0], default=None)
    for item in sorted(chosen, key=lambda c: c[0]):
        others = [u for c in kept if c is not item for _s, u in [c]]
        if others and not says_more(item[1], others):
            holder = _holder_adding_nothing_asked(item, kept, question) if item is best else None
            kept.remove(holder or item)
    return kept


def _holder_adding_nothing_asked(best: tuple[float, Unit], kept: list, question: str):
    """The quote of another section that holds every word of the best one and adds none the question asks (its
    note's title counted as the best one's words): the best is the answer said plainly, the
    other the same said in passing. "who am i going to lisbon with" is the trip note's
    "Second week of May, with Ana.", not the journal's "Called Ana about the Lisbon trip: we
    settled on the second week of May."."""
    unit = best[1]
    own = _words(unit.shown)
    if unit.kind in ("code", "block") or not question:
        return None
    asked = query_terms(question) - own - query_terms(" ".join((unit.chunk.title, unit.chunk.heading)))
    for item in kept:
        # in another section: in its own, the longer is the same said whole (a sentence cut at a page's chunk end)
        if item is not best and _section(item[1]) != _section(unit) and item[1].kind not in ("code", "block") \
                and own <= _words(item[1].shown) \
                and not (_words(item[1].shown) - own) & asked:
            return item
    return None


def _section(unit: Unit) -> tuple:
    return unit.chunk.path, unit.chunk.page, unit.chunk.heading


def says_more(unit: Unit, shown: Sequence[Unit]) -> bool:
    """Does the unit hold a content word or a figure that none of the units shown holds? Code
    is read character by character: two nginx blocks that differ in `/;` against
    `$request_uri;` are two answers, though one's words are all in the other."""
    if unit.kind in ("code", "block"):
        text = " ".join(unit.shown.split())
        return not any(text in " ".join(u.shown.split()) for u in shown)
    said = set().union(*(_words(u.shown) for u in shown)) if shown else set()
    new = _words(unit.shown) - said
    return bool(new) and not _relabelled(unit, shown, new)


RELABEL_WORDS = 2  # words a row given again may add: its label ("PERFORMANCE MEASURE:")


def _relabelled(unit: Unit, shown: Sequence[Unit], new: set[str]) -> bool:
    """Is the unit a row of a PDF another quote of its file already gives, under another label?
    Every figure of it (three or more, of two digits or more) stands in that quote, and it adds a
    word or two: a report's "PERFORMANCE MEASURE: Percent of customers satisfied ... FY 2016 Results:
    72.2% ..." beside the same row of its table, read from another page. Not a note's steps: the
    Mobile steps "1. ... 2. ... 3." beside the Desktop ones are another procedure."""
    figures = {f for f in _FIGURE.findall(unit.shown) if sum(c.isdigit() for c in f) >= 2}
    # a new word with a digit in it is a figure or a code the others do not give ("014X5140" beside "014 5140")
    if unit.chunk.page is None or len(figures) < 3 or any(c.isdigit() for w in new for c in w) \
            or len(new) > RELABEL_WORDS:
        return False
    return any(u.chunk.path == unit.chunk.path and figures <= set(_FIGURE.findall(u.shown)) for u in shown)


def _words(text: str) -> set[str]:
    return query_terms(text) | set(_FIGURE.findall(text))


def inside(small: Unit, big: Unit) -> bool:
    (p, a, b), (q, x, y) = _span(small), _span(big)
    return p == q and x <= a and b <= y


def _span(unit: Unit) -> tuple[tuple[str, int | None], int, int]:
    where = (unit.chunk.path, unit.chunk.page)  # a PDF's lines count from 1 on every page
    if unit.passage is not None:
        return where, unit.passage[1], unit.passage[2]
    return where, unit.line_start, unit.line_end


def units_once(units: list[Unit]) -> list[Unit]:
    """Overlapping chunks repeat text: keep each (file, lines, text) once, from the best hit."""
    seen, kept = set(), []
    for unit in sorted(units, key=lambda u: u.hit.rank):
        key = (unit.chunk.path, unit.line_start, " ".join(unit.text.split()))
        if key not in seen:
            seen.add(key)
            kept.append(unit)
    return kept


def same_words(a: Unit, b: Unit) -> bool:
    """Two units of one file that say the same words (a PDF page's chunks overlap, and the
    sentence they share can stand at other lines in each)."""
    return a.chunk.path == b.chunk.path and " ".join(a.text.split()) == " ".join(b.text.split())
