"""The parts of a question: "How many clicks for espresso, and how long should the shot take?"
asks two things, and an answer that gives one has not answered.

Parts are found by general rules over the question's words, not by a parser:
- several questions ("...? ...?");
- clauses joined by "and", ";" or a comma, where the second clause opens with a question
  word or an auxiliary ("..., and how long ...", "...; what ...");
- alternatives to compare ("X or Y", "compare X and Y", "difference between X and Y",
  "X vs Y"): one part for each, the rest of the question shared.
A part without content words of its own ("and why?") stays with the one before it.
A part may ask a quality ("how hard should the water be"): ``asked_quality`` names it.
"""

from __future__ import annotations

import os
import re

from ..scene import PREMISE, last_sentence
from ..words import answer_type, asks_figure, query_terms

MAX_PARTS = 4
_ASK = (r"how|what|when|where|why|which|who|whom|whose|is|are|was|were|do|does|did|can|could|"
        r"should|would|will|shall|may|must|has|have")
# a clause boundary: "?", ";", or ", and" / " and" / "," right before a question word
_CLAUSE = re.compile(rf"\?\s+|;\s*|,?\s+(?:and|also|plus|as well as)\s+(?=(?:(?:for|in|at|by|to|from)\s+)?(?:{_ASK})\b)"
                     # "..., and if I ever get banned by mistake can I contest it?": a condition, then the ask
                     rf"|,\s+and\s+(?=(?:if|when|once)\s[^,?]*?\b(?:{_ASK})\s+(?:i|we|you|it|they)\b)"
                     rf"|,\s+(?=(?:{_ASK})\b)", re.I)
_COMPARE = re.compile(r"\b(?:compare|comparison|difference|differences|differ|versus|vs\.?|between|"
                      r"better|prefer|or)\b", re.I)
_ALTERNATIVE = re.compile(r"(?P<a>[\w'`.#+-]+(?:\s+[\w'`.#+-]+)?)\s+(?P<conj>or|and|vs\.?|versus)\s+"
                          r"(?P<b>[\w'`.#+-]+(?:\s+[\w'`.#+-]+)?)", re.I)
_NOT = {"not", "no", "none", "neither", "otherwise", "both", "either", "something", "anything"}
_STOPS = {"a", "an", "the", "my", "your", "of", "to", "in", "on", "for", "with", "it", "them", "is",
          "are", "do", "does", "i", "me", "should", "use", "between", "compare", "difference"}


def question_parts(question: str) -> list[str]:
    """The parts the question asks, in its order; one part for a simple question."""
    text = " ".join(question.split())
    clauses = _with_scope([c.strip(" ,?") for c in _CLAUSE.split(text) if c and c.strip(" ,?")])
    parts: list[str] = []
    for clause in clauses:
        for part in _alternatives(clause):
            if parts and not (query_terms(part) - query_terms(parts[-1])) and not _asks_more(part, parts[-1]):
                parts[-1] = f"{parts[-1]} {part}"  # adds no word of its own: not a part of its own
            else:
                parts.append(part)
    parts = [p for p in parts if query_terms(p) or asks_figure(p)] or [text]
    return parts[:MAX_PARTS]


# A clause that opens with a preposition and asks nothing ("In a base, how do I work out a date
# two weeks on?", "On my phone, can I ...", "By the end of fiscal 2016, how far ...", "Besides bold,
# what ...") says where the question stands, not a thing it asks:
# read alone, "In a base" was a part, and its quote took the place of the answer's.
_SCOPE = re.compile(rf"^(?:in|on|inside|within|for|with|using|under|from|at|while|by|during|since|as of|"
                    rf"besides|apart from|other than|except)\b(?!.*\b(?:{_ASK})\b)", re.I)


def _with_scope(clauses: list[str]) -> list[str]:
    """The clauses without a leading scope clause, or a leading circumstance ("After I record a
    lecture into a note, can Obsidian transcribe the audio ...?"): each part is read beside the
    whole question, which holds it (prefixed to each part, "In clipper templates" drew both parts'
    quotes to the templates note's opening sentence). Counted as a part, a circumstance made a
    simple question one of two, and a word no note uses in the other no longer hedged the answer.
    What the asker tells first ("I moved a bunch of notes into a new folder and now my links are
    broken, how do I fix that?") stays: it is often what the question is about."""
    lead = clauses[0] if len(clauses) > 1 else ""
    return clauses[1:] if lead and (_SCOPE.match(lead) or _CIRCUMSTANCE.match(lead)) else clauses


# "..., when installing a Python package", "..., when you rename a file": when the clause before
# applies. Read as a part it guides the quotes as any part does, but it asks nothing a note could
# leave unsaid (a question asking when inverts: "when is it worse", "when do I").
_CIRCUMSTANCE = re.compile(r"^(?:when|while|once|if|after|before|until)\s+(?!(?:is|are|was|were|do|does|did|can|could|"
                           r"should|would|will|shall|may|might|must|has|have|had)\b)", re.I)


def asks_nothing(part: str) -> bool:
    """Is the part only the circumstance of the one before ("when installing a Python package"),
    or what the asker tells of themselves (``words.PREMISE``: "I committed too early; can I undo
    it ...?" printed "Your notes don't say: I committed too early?" under the answer)? Read from the
    part's last sentence: "I bought my brother some credit as a present. Can he hand it on ...?" asks."""
    return bool(_CIRCUMSTANCE.match(part) or PREMISE.match(last_sentence(part)))


# "When I delete a note, ..., can I still get it back?": a part whose subject is what the part before
# named, saying little of its own. Read alone, its few words ("get", "back") score low against the
# very sentence that answers it ("To restore a file ..."), so its score alone cannot say it is missing.
_BACK = re.compile(r"\b(?:it|they|them|that|this|these|those|everything|each)\b", re.I)
_OWN_WORDS = 3  # "can it transcribe my voice memos" names its own thing: its words judge it


def refers_back(part: str, before: str) -> bool:
    """Does the part ask about what ``before`` named, in a few words of its own, and no figure?"""
    return bool(before) and points_back(part) and not asks_figure(part) \
        and len(query_terms(part) - query_terms(before)) <= _OWN_WORDS


def points_back(part: str) -> bool:
    """Does the part name its subject by a word that points back ("how far is it from the metro")?"""
    return bool(_BACK.search(part))


def _asks_more(part: str, before: str) -> bool:
    """"..., and for how long?" asks a figure the clause before does not: a part of its own."""
    return asks_figure(part) and (not asks_figure(before) or answer_type(part) is not answer_type(before))


def _alternatives(clause: str) -> list[str]:
    """"Should I use tags or folders for projects?" -> the same question about each."""
    if not _COMPARE.search(clause):
        return [clause]
    for m in _ALTERNATIVE.finditer(clause):
        conj = m.group("conj").lower()
        if conj == "and" and not _compares_both(clause, m.start("conj")):
            continue
        a, b = _trim(m.group("a"), left=True), _trim(m.group("b"), left=False)
        if not a or not b or not query_terms(a) or not query_terms(b) or b.lower() in _NOT:
            continue
        before, after = clause[:m.start()] + m.group("a")[:len(m.group("a")) - len(a)], clause[m.end():]
        after = m.group("b")[len(b):] + after
        return [" ".join(f"{before}{x}{after}".split()) for x in (a, b)]
    return [clause]


# "Switch between reading and editing view", "sync my vault between my phone and my laptop": one
# thing done across the two, not two things to answer apart.
_ACROSS = re.compile(r"\b(?:switch|toggle|move|go|jump|navigate|alternate|swap|sync|transfer|drag|flip|share|copy|"
                     r"link)(?:e?s|ed|ing)?\s+(?:\w+\s+){0,3}?between\b", re.I)


def _compares_both(clause: str, start: int) -> bool:
    """Does "X and Y" (at ``start``) name two things the clause asks to compare? "the difference
    between X and Y", "compare X and Y"; not "save each layout and switch between them"."""
    if re.search(r"\b(?:compare|comparison|difference|differ|versus|vs)\b", clause, re.I):
        return True
    before = clause[:start]
    return bool(re.search(r"\bbetween\b", before, re.I)) and not _ACROSS.search(before)


def _trim(phrase: str, left: bool) -> str:
    """The alternative itself: the words next to the conjunction, without "the", "use", ..."""
    words = phrase.split()
    keep = []
    for w in (reversed(words) if left else words):
        if w.lower() in _STOPS:
            break
        keep.append(w)
    return " ".join(reversed(keep) if left else keep)


# "how hard should the water be", "how wet is my dough": a quality, which an answer must name in
# some words ("hydration", "dry"). Not a figure ("how long", words.asks_figure), nor a manner.
_QUALITY = re.compile(r"\bhow\s+([a-z]{3,})\s+(?:is|are|was|were|should|must|does|do|did|can|could|will|"
                      r"would|gets?|becomes?)\b", re.I)
_MANNER = {"well", "come", "soon", "quickly", "exactly", "else", "far", "long", "much", "many", "often"}


def asked_quality(part: str) -> str:
    """The quality a part asks about ("hard" in "how hard should the water be"), or ""."""
    m = _QUALITY.search(part)
    if not m or asks_figure(part) or m.group(1).lower() in _MANNER or not query_terms(m.group(1)):
        return ""
    return m.group(1).lower()


PART_MARGIN = 0.9  # a part's quote may score this share of its best, to be the part's own


def its_own(ranked: list, i: int, parts: list[str], units: list) -> int:
    """The unit a part is answered by: its best, unless that holds none of the part's own words
    (those no other part asks) and a unit near the best does. Each part is read
    beside the whole question, so "how do I create a callout and can callouts be folded?" drew the
    foldable sentence for both parts, and "To create a callout, add `[!info]` ..." was never shown."""
    asked = [query_terms(p) for p in parts]
    own = asked[i] - set().union(*(a for j, a in enumerate(asked) if j != i))
    top = ranked[0][2]
    if not own or _holds_any(units[top].shown, own):
        return top
    for score, _base, k in ranked:
        if score < ranked[0][0] * PART_MARGIN:
            break
        if _holds_any(units[k].shown, own):
            return k
    return top


def _holds_any(text: str, words: set[str]) -> bool:
    """Does the text hold one of the words in some form ("logs": "login"; "fold": "foldable")?"""
    def akin(a: str, b: str) -> bool:
        common = len(os.path.commonprefix((a, b)))
        return common >= 3 and common >= min(len(a), len(b)) - 1
    return any(akin(w, t) for t in query_terms(text) for w in words)
