"""Does a checked sentence add to the quotes shown above it? A sentence true to its quote is
shown only when it says something the quotes do not say plainly (issue 19's "say it once"):
a direct yes or no, the figure asked for lifted out, or a combination of two quotes; and not
when it picks one of several figures, or says yes where its quote says no."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..retrieve.figures import row_lines
from ..words import asks_figure, query_terms, split_sentences
from .check import _LONG_UNITS, _NUMBER, _UNIT_WORDS, CITATION, FREE_WORDS, Verdict, _digits, _norm, facts_of

_YES_NO = re.compile(r"^\s*(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have|must)\b", re.I)
_DIRECT = re.compile(r"^\s*(?:yes|no)\b", re.I)
_YES = re.compile(r"\W*yes\b", re.I)
# the notes quoted again under the quotes: 'The notes say: "Bake in a Dutch oven at 250°C, lid on'
_QUOTING = re.compile(r"^\W*(?:(?:the|your|my)\s+)?(?:notes?|sources?|quotes?|passages?)\s+(?:says?|states?|reads?)\b"
                      r"\W*[\"“]|^\W*according to (?:the |your )?(?:notes?|sources?)\W*[\"“]", re.I)


_ANSWER_FRAME = re.compile(r"^\W*(?:(?:the|my|a|your)\s+)?(?:short\s+|direct\s+)?answer(?:\s+is)?\s*[:\u2014-]\s*",
                           re.I)


def adds_to_quotes(verdict: Verdict, question: str, quotes: dict[int, str]) -> Verdict:
    """A checked sentence is shown only when it adds to the quotes above it: a direct yes or
    no, the figure the question asks for lifted out, or a combination of two quotes. One that
    restates a quote makes the reader read it twice; one that shares nothing with the question
    does not answer it."""
    cited = [quotes[n] for n in verdict.cited if n in quotes]
    said = _ANSWER_FRAME.sub("", verdict.text)  # "The answer is: <the quote's sentence>" is the quote
    if _QUOTING.search(verdict.text) or _copied(said, cited) or _reworded(said, cited):
        # a sentence of the quote above it, word for word: even with a figure it is read twice
        # (and may not be the one asked: "Hand grinder with 30 micron steps per click" for clicks)
        return Verdict(verdict.sentence, verdict.text, verdict.cited, False, "restates its quote", [],
                       verdict.support)
    picked = _one_of_several(verdict.text, cited, question)
    if picked:
        return Verdict(verdict.sentence, verdict.text, verdict.cited, False,
                       f"gives {picked} as the figure, but its quote gives several and says which is which",
                       [picked], verdict.support)
    if _joins_cells(verdict.text, cited):
        return Verdict(verdict.sentence, verdict.text, verdict.cited, False,
                       "says of one thing what its quote says of another", [], verdict.support)
    facts = facts_of(verdict.text)
    figure = asks_figure(question) and any(_NUMBER.search(f) for f in facts)
    direct = _YES_NO.search(question) and _DIRECT.search(verdict.text)
    if direct and _yes_then_no(verdict.text, question):
        return Verdict(verdict.sentence, verdict.text, verdict.cited, False, "says yes, then no", [],
                       verdict.support)
    if direct and _contradicts(verdict.text, cited):
        return Verdict(verdict.sentence, verdict.text, verdict.cited, False, "says yes where its quote says no",
                       [], verdict.support)
    combined = _combines(verdict.text, [quotes[n] for n in dict.fromkeys(verdict.cited) if n in quotes], question)
    on_topic = bool(query_terms(verdict.text) & query_terms(question))
    if figure and on_topic and not direct and len(_beyond(verdict.text, cited, question)) > MAX_BEYOND:
        # a figure lifted out is the figure with its label; a clause around it that its quote does
        # not hold is the model's ("... for up to two weeks and can be deleted if they exceed that
        # timeframe"), which the share of supported words let through
        return Verdict(verdict.sentence, verdict.text, verdict.cited, False, "says more than its quote", [],
                       verdict.support)
    if direct or figure and on_topic:
        return verdict
    if combined and on_topic:
        return verdict
    reason = "restates its quote" if on_topic else "does not answer the question"
    return Verdict(verdict.sentence, verdict.text, verdict.cited, False, reason, [], verdict.support)


# words a figure lifted out may carry that neither its quotes nor the question hold ("about", "typically")
MAX_BEYOND = 1


def _beyond(text: str, quotes: Sequence[str], question: str) -> set[str]:
    """The sentence's content words that its quotes and the question do not hold."""
    held = set().union(*(query_terms(q) for q in quotes)) if quotes else set()
    return query_terms(text) - FREE_WORDS - query_terms(question) - held


def _combines(text: str, quotes: Sequence[str], question: str) -> bool:
    """Does the sentence need two of its quotes: does each of two give it a word the others do
    not? Citing two is not enough: oh-08's "Obsidian supports the following property types: -
    **Text** - **List** - **Number** - [1][2]" is quote 2's list cut short, with a stray [1] in
    front. Nor are words no quote holds: "... select **New tab** and choose a new tab that is not
    already selected by default [1][2]" (as-23, with the model) is quote 1's sentence, quote 2
    giving nothing, and "choose", "already" and "default" the model's."""
    words = query_terms(text) - FREE_WORDS - query_terms(question)
    held = [words & query_terms(q) for q in quotes]
    given = [h - set().union(*(other for j, other in enumerate(held) if j != i)) for i, h in enumerate(held)]
    return sum(1 for g in given if g) >= 2


# A figure lifted out says it with its label in a few words ("Espresso takes 8 clicks"); a sentence
# of this many content words, every one its quote's, is the quote said again in other order.
REWORDED_WORDS = 6


def _reworded(text: str, quotes: Sequence[str]) -> bool:
    """Is the sentence its quote again, reworded? "The company offers two types of discounts:
    education and non-profit; both offer 40% off our add-on services Obsidian Sync and Obsidian
    Publish" under "Obsidian currently offers two types of discounts: education and non-profit.
    They both give you 40% off our add-on services ...": at most one word its quote does not
    hold, and most of the quote's words, in a sentence too long to be a figure lifted out."""
    words = query_terms(text) - FREE_WORDS
    if len(words) < REWORDED_WORDS:
        return False
    for quote in quotes:
        if len(words - query_terms(quote)) > 1:
            continue
        # most of one of its lines or sentences: a quote read with its title and headings (a
        # report's run to a dozen words) is never 70% said by one sentence
        pieces = [p for line in quote.splitlines() for p in (line, *split_sentences(line))]
        for piece in pieces:
            held = query_terms(piece) - FREE_WORDS
            if len(held) >= REWORDED_WORDS and len(words & held) >= 0.7 * len(held):
                return True
    return False


# words in a row of a quote that are its own again, not a clause lifted out ("Espresso takes 8 clicks")
COPIED_WORDS = 10


def _copied(text: str, quotes: Sequence[str]) -> bool:
    """Is the sentence one of a quote's own sentences, or a long run of one, word for word? (A
    clause lifted out of a longer sentence, "Espresso takes 8 clicks", is not: it says the asked
    part plainly.)"""
    said = _norm(text).rstrip(".!? ")
    if not said:
        return False
    lines = [line for q in quotes for line in q.splitlines()]
    return any(said == _norm(s).rstrip(".!? ") for line in lines for s in split_sentences(line)) \
        or len(said.split()) >= COPIED_WORDS and any(said in _norm(line) for line in lines)


# a figure with what it measures: "$25", "5 MB", "20 minutes" (a bare number has no kind to compare)
_AMOUNT = re.compile(r"([$€£])?\**\s?(?<![\w.:])(\d[\d,]*(?:\.\d+)?)(?![\d:])\**\s?(%|°|[a-zA-Z]+)?")
# where one figure's label ends and the next begins: a table row's cells, a list of alternatives
_CELL = re.compile(r"[;|\n]|[.!?]\s|,\s|\s(?:and|or|while|whereas)\s")


def _amounts(text: str) -> list[tuple[str, str]]:
    """(value, kind) of each figure that says what it measures: a currency or a unit, or the
    thing it counts ("1 vault", "10 vaults": kind "vault")."""
    found = []
    for m in _AMOUNT.finditer(_digits(text)):
        unit = (m.group(3) or "").lower()
        kind = m.group(1) or _LONG_UNITS.get(unit) or (unit if unit in _UNIT_WORDS or unit in ("%", "°") else "")
        if not kind and len(unit) > 2:
            kind = next(iter(query_terms(unit)), "")
        if kind:
            found.append((m.group(2).replace(",", ""), kind))
    return found


def _values(text: str) -> set[str]:
    """Every figure a sentence states, with or without what it measures (citations left out)."""
    return {m.group(2).replace(",", "") for m in _AMOUNT.finditer(_digits(CITATION.sub("", text)))}


def _one_of_several(text: str, quotes: Sequence[str], question: str) -> str:
    """The figure a sentence states as *the* answer when its quote gives several of that kind,
    each with its own label, and the sentence names none of them: "The Catalyst license is $25"
    from "Insider: $25; Supporter: $50; VIP: $100" is the first tier said as the only price
    (oh-53); "An Insider license costs $25" says which. A sentence that gives them all is a
    list, not a pick. Returns the figure picked ("" when none is)."""
    said = _values(text)
    words = query_terms(text)
    free = query_terms(question) | FREE_WORDS
    for cell_values, cells in _rows_of(quotes):
        for value, kind in cell_values:
            rivals = {v for v, k in cell_values if k == kind and v != value}
            if value not in said or not rivals or rivals <= said:
                continue
            own = set().union(*(query_terms(c) for c in cells if (value, kind) in _amounts(c)))
            others = set().union(*(query_terms(c) for c in cells if any(
                (v, kind) in _amounts(c) for v in rivals)))
            label = {w for w in own - others - free if not w[0].isdigit()}  # the figures are not labels
            if label and not label & words:
                return next(_said_as(m) for m in _AMOUNT.finditer(text) if m.group(2).replace(",", "") == value)
    return ""


def _said_as(m: re.Match) -> str:
    """A figure as the sentence says it: "$25", "5 MB", "10" (not "10, and")."""
    unit = (m.group(3) or "").lower()
    if m.group(1) or unit in _LONG_UNITS or unit in _UNIT_WORDS or unit in ("%", "°"):
        return m.group(0).strip("* ")
    return m.group(2).rstrip(",")


def _rows_of(quotes: Sequence[str]):
    """Each line of the quotes with its figures and its cells (see ``_CELL``)."""
    for quote in quotes:
        for line in quote.splitlines():
            cells = [c for c in _CELL.split(line) if c.strip()]
            yield set(_amounts(line)), cells


_NEGATION = re.compile(r"\b(?:not|never|no|cannot|can't|don't|doesn't|isn't|aren't|won't|excluded?|ignored?)\b", re.I)


def _yes_then_no(text: str, question: str) -> bool:
    """"Yes, tags with multiple words cannot contain blank spaces" to "Can a tag have a space in
    it?": a yes that denies what the question asks with its own verb ("can" / "cannot", "does" /
    "doesn't") says both. A yes with another negation ("Yes, it does not need an account" to "Can
    I use it offline?") may still be one."""
    verb = _YES_NO.search(question)
    if not _YES.match(text) or not verb:
        return False
    return bool(re.search(rf"\b{verb.group(0).strip()}(?:n?'t|not|\s+not)\b", text, re.I))


def _contradicts(text: str, quotes: Sequence[str]) -> bool:
    """A bare "Yes, ..." over quotes that say no: "Yes, Obsidian Sync syncs hidden folders like
    .git [1]" above "hidden and excluded from sync" (oh-46). A word-overlap check cannot read
    polarity; a yes the quotes hedge with a negation is left to the quotes themselves."""
    says_yes = _YES.match(text) and not _NEGATION.search(text)
    return bool(says_yes) and any(_NEGATION.search(q) for q in quotes)


# "X is Y": the claim a sentence makes of its subject
_COPULA = re.compile(r"\b(?:is|are|was|were)\b", re.I)


def _joins_cells(text: str, quotes: Sequence[str]) -> bool:
    """Does an "X is Y" sentence say of X what its quote says of something else? "The grinder
    with 30 micron steps per click is a French press" from "Hand grinder with 30 micron steps per
    click." and the table row "French press | 30"; "The valve I chose for the garden is the 16 mm
    drip line" from the parts list's "Valve: Rain Bird RB-75" and "16 mm drip line ...": every word
    is its quote's, so the support check passes, and no sentence, item or table row (read with its
    header) of the quote says most of X and most of Y together. Words no part of the quote holds
    (the note's title, the question's own) and figures, which a row shares with many, are left
    out of X and Y."""
    text = CITATION.sub("", text)
    copula = _COPULA.search(text)
    cells = [query_terms(c) for q in quotes for c in _cells(q)]
    if not copula or not cells:
        return False
    held = set().union(*cells)
    subject = {w for w in query_terms(text[:copula.start()]) - FREE_WORDS if w in held and not w[0].isdigit()}
    claim = {w for w in query_terms(text[copula.end():]) - FREE_WORDS if w in held and not w[0].isdigit()}
    claim -= subject
    return bool(subject and claim) and not any(2 * len(cell & subject) >= len(subject)
                                               and 2 * len(cell & claim) >= len(claim) for cell in cells)


def _cells(quote: str) -> list[str]:
    """A quote's sentences, list items and table rows, each row read with its header."""
    return [cell for line in row_lines(quote) for cell in split_sentences(line)]
