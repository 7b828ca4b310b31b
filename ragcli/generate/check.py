"""Checking a generated answer against its evidence, sentence by sentence, before anyone reads it.

Each sentence is held back until it is complete, then tested against the quotes it cites
(or, citing none, the quote it is closest to):
- facts: every number (with its unit), date, quoted string, code span, URL or e-mail, and
  every name (a capitalised word that is not the sentence's first, an acronym, a CamelCase
  or snake_case identifier) must appear in that evidence;
- support: most of its content words must be there too (stemmed; words of the question and
  a few connective words are free), so a sentence cannot carry a claim of its own.
A sentence that fails is dropped; when it cites a quote, the reader still gets that quote.
When nothing survives, the answer is the best quotes, said plainly. A small model
paraphrasing the right note into a wrong number therefore never reaches the user as fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..words import query_terms

MIN_SUPPORT = 0.6  # share of a sentence's content words found in its evidence
# When to stop reading the model: the prompt asks for a few short sentences, and a small model
# that has failed several checks in a row, or repeats itself, is looping or off track; what
# follows would be dropped too, at the cost of the user's wait.
MAX_KEPT = 4
MAX_FAILED_RUN = 3

CITATION = re.compile(r"\s*\[(\d{1,3})\]")
# a unit said in full counts as one: "for 2 minutes" is a fact, "2 ways" is prose
_LONG_UNITS = {"second": "s", "seconds": "s", "sec": "s", "secs": "s", "minute": "min", "minutes": "min",
               "mins": "min", "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "day": "day", "days": "day",
               "week": "week", "weeks": "week", "month": "month", "months": "month", "year": "year",
               "years": "year", "gram": "g", "grams": "g", "litre": "l", "litres": "l", "liter": "l",
               "liters": "l", "degree": "°", "degrees": "°", "percent": "%", "click": "click", "clicks": "click"}
_NUMBER = re.compile(r"(?<![\w.:])[-+]?\d[\d,]*(?:\.\d+)?(?!:\d)(?:\s?(?:%|°[CF]?|(?:"
                     + "|".join(sorted(_LONG_UNITS, key=len, reverse=True)) + r")\b|[a-zA-Z]{1,4}\b))?")
# a time of day: "6:00" and "06:00" are the same time, "7:00" is not (nor its minutes alone)
_TIME = re.compile(r"(?<![\w.:])(\d{1,2}):(\d{2})(?![\d:])")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b")
_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]")
_CODE = re.compile(r"`([^`]{1,120})`")
_URL = re.compile(r"\b(?:https?://|www\.)\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_IDENT = re.compile(r"\b(?:[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w+_\w+|[A-Z]{2,}\d*)\b")
_NAME = re.compile(r"(?<=[a-z,;:]\s)([A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*)")
_SENTENCE = re.compile(r"(?<=[.!?])(?:\s*\[\d{1,3}\])*\s+(?=\S)|\n+")
# Words an answer may use without the notes saying them (they carry no claim of their own).
FREE_WORDS = frozenset(query_terms(
    "note notes source sources according say says said mention mentions mentioned state states "
    "stated describe describes described explain explains also however therefore thus yes no "
    "use used using can should would must may might need needs set sets setting one two "
    "answer question"))
_UNIT_WORDS = {"psi", "bar", "mb", "gb", "kb", "ms", "s", "min", "h", "km", "m", "cm", "mm", "kg", "g"}


@dataclass
class Verdict:
    sentence: str  # as generated, citations included
    text: str  # without citation markers
    cited: list[int]
    ok: bool
    reason: str = ""
    missing: list[str] = field(default_factory=list)  # facts not in the evidence
    support: float = 1.0

    def to_json(self) -> dict:
        return {"sentence": self.text, "cited": self.cited, "reason": self.reason,
                "missing": self.missing, "support": round(self.support, 3)}


_NUMBER_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten eleven "
                                                   "twelve".split())} | {"fifteen": "15", "twenty": "20",
                                                                         "thirty": "30", "sixty": "60"}
# an amount spelled out: "two weeks" is as much a fact as "2 weeks" (and the same one)
_SPELLED = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")(?=\s+(?:" + "|".join(_LONG_UNITS) + r")\b)", re.I)


def _digits(text: str) -> str:
    return _SPELLED.sub(lambda m: _NUMBER_WORDS[m.group(1).lower()], text)


def facts_of(sentence: str) -> list[str]:
    """What a sentence states as fact and must be found verbatim in its evidence. An amount
    spelled out counts as its figure: "kept for two weeks" cites a quote that says so, not one
    that says "1 month" beside another that says "two weeks"."""
    text = _digits(CITATION.sub("", sentence))
    found: list[str] = []
    for pattern in (_URL, _DATE):
        found += pattern.findall(text)
    found += [m.group(0) for m in _TIME.finditer(text)]
    found += [m.group(1) for m in _QUOTED.finditer(text)]
    found += [m.group(1) for m in _CODE.finditer(text)]
    for m in _NUMBER.finditer(text):
        value = m.group(0).strip()
        if value.rstrip(".").replace(",", "").lstrip("+-").isdigit() and len(value) == 1:
            continue  # a single digit ("2 ways") is prose more than fact; "2 minutes" is not
        found.append(value)
    found += _IDENT.findall(text)
    found += [m.group(1) for m in _NAME.finditer(text)]
    return list(dict.fromkeys(f.strip() for f in found if f.strip()))


def _norm(text: str) -> str:
    text = text.lower().replace("’", "'").replace("“", '"').replace("”", '"')
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,000 -> 1000
    return " ".join(text.split())


def fact_in(fact: str, evidence: str) -> bool:
    """Is ``fact`` in the evidence? Numbers must match as numbers (1.5 is not in 1.7 or 15),
    with the unit beside them when the sentence gives one."""
    ev = _norm(_digits(evidence))
    f = _norm(fact)
    time = _TIME.fullmatch(f)
    if time:
        wanted = (int(time.group(1)), time.group(2))
        return any((int(m.group(1)), m.group(2)) == wanted for m in _TIME.finditer(ev))
    number = re.match(r"^([-+]?\d[\d.]*)\s?(.*)$", f)
    if number:
        value, unit = number.group(1).rstrip("."), number.group(2)
        # not the "2" of "2:45": a time is checked as a time
        spots = [m for m in re.finditer(rf"(?<![\d.:]){re.escape(value)}(?![\d]|\.\d|:\d)", ev)]
        if not spots:
            return False
        if unit in _LONG_UNITS:  # "45 seconds" is in "45 s" and in "45 seconds"; "2 minutes" is in neither
            return any(_unit_at(ev, m.end()) == _LONG_UNITS[unit] for m in spots)
        if not unit or unit not in _UNIT_WORDS and not unit.startswith(("%", "°")):
            return True
        return any(ev[m.end():m.end() + 6].lstrip().startswith(unit) for m in spots)
    return f in ev


def _unit_at(text: str, pos: int) -> str | None:
    """The unit written right after a number, in its short form ("minutes" -> "min")."""
    m = re.match(r"\s?(%|°|[a-z]+)", text[pos:pos + 12])
    if not m:
        return None
    word = m.group(1)
    return _LONG_UNITS.get(word, word if word in ("%", "°") or word in _LONG_UNITS.values() else None)


def content_support(text: str, evidence: str, free: set[str]) -> float:
    words = query_terms(text) - FREE_WORDS - free
    if not words:
        return 1.0
    have = query_terms(evidence)
    return len(words & have) / len(words)


# list bullets and numbers before a sentence; "**bold**" keeps its stars (a bullet has a space after)
_LEAD = re.compile(r"^(?:\s|[*_#>•+-](?=\s))*(?:\d{1,2}[.)]\s+|\(\d{1,2}\)\s+)?")
# the model's own ways of citing: "(Note 2)", "(source 1)", "[Quote 3]" mean [2], [1], [3]
_SOURCE_REF = re.compile(r"[(\[]\s*(?:note|source|quote|passage)\s*#?(\d{1,3})\s*[)\]]", re.IGNORECASE)


def check_sentence(sentence: str, quotes: dict[int, str], question: str = "",
                   attribute: Callable[[str], list[int]] | None = None) -> Verdict:
    """Test one sentence against the quotes it cites (``quotes``: number -> text with its
    title and heading). ``attribute`` picks quotes for a sentence that cites none, or that
    cites the wrong one: a claim found in another quote is shown citing that quote, so the
    citation the reader follows is always one that says it."""
    sentence = _SOURCE_REF.sub(r"[\1]", sentence)
    cited = [int(n) for n in CITATION.findall(sentence)]
    text = _LEAD.sub("", CITATION.sub("", sentence)).strip()  # "2) ", "- ", "[1] " lead-ins
    text = re.sub(r"^\W+(?=\w)", "", text) if text[:1] in ":;,)" else text
    valid = [n for n in dict.fromkeys(cited) if n in quotes]
    others = attribute(text) if attribute is not None else []
    if not valid and not others:
        return Verdict(sentence, text, [], False, "cites no source and matches none")
    verdict = _against(sentence, text, valid or others, quotes, question)
    if not verdict.ok and valid and others and set(others) != set(valid):
        second = _against(sentence, text, others, quotes, question)
        if second.ok:
            return second
    return verdict


def _against(sentence: str, text: str, numbers: list[int], quotes: dict[int, str], question: str) -> Verdict:
    evidence = "\n".join(quotes[n] for n in numbers)
    facts = facts_of(text)
    missing = [f for f in facts if not fact_in(f, evidence)] + _mangled_code(text, evidence)
    asked = query_terms(question)
    support = content_support(text, evidence, asked)
    if not missing and not facts and not (query_terms(text) - FREE_WORDS - asked):
        return Verdict(sentence, text, numbers, False, "adds nothing to the question", [], support)
    if missing:
        return Verdict(sentence, text, numbers, False, "states what its source does not: " + ", ".join(missing),
                       missing, support)
    if support < MIN_SUPPORT:
        return Verdict(sentence, text, numbers, False, f"mostly not in its source ({support:.0%} of its words)",
                       [], support)
    return Verdict(sentence, text, numbers, True, "", [], support)


_EMPTY_MARKUP = re.compile(r"\(\s*\)|\[\s*\]|\{\s*\}|``")
# a template slot the model left unfilled: "Pour over {m}, 30", "approximately [n] clicks" (ex-03, mp-01)
_PLACEHOLDER = re.compile(r"\{\w{1,12}\}|\[[a-zA-Z]{1,3}\]")
# a table's markup copied into prose: a rule line ("|-----") or empty cells ("| |")
# (or a row's cells: "| Sync Standard | Sync Plus :: Total storage | 1 GB |", mp-19), or the
# prompt's own " :: " between a quote's header and its text, or the "Table rows:" a PDF's table is
# quoted under ("Table rows: - Single — AND at the end of 2017 you were*", rp-31)
_TABLE_MARKUP = re.compile(r"\|\s*:?-{3,}|-{3,}:?\s*\||\|\s*\||\|[^|\n]+\|[^|\n]+\||\s::\s|\bTable rows:")


def _mangled_code(text: str, evidence: str) -> list[str]:
    """Code or markup the model broke on its way through: an emptied "(`-`)" -> "()", a code
    span left open, a slot left unfilled ("{n}"), or a table's rows run into a sentence
    ("Settings I use: | Brew | Clicks | |-------"): each word may be in the quote, but the
    reader gets noise. Code spans that survive whole are facts, checked byte for byte by
    ``facts_of``."""
    broken = [m.group(0) for m in _EMPTY_MARKUP.finditer(text) if m.group(0) not in evidence]
    broken += [m.group(0) for m in _PLACEHOLDER.finditer(text) if m.group(0) not in evidence]
    if _TABLE_MARKUP.search(_CODE.sub("", text)):
        broken.append("table markup")
    if text.count("`") % 2:
        broken.append("an unclosed code span")
    return broken


class SentenceGate:
    """Wraps a token stream: holds text back until a sentence is complete, checks it, and
    passes on only sentences that hold. ``verdicts`` keeps every decision."""

    def __init__(self, check: Callable[[str], Verdict], on_text: Callable[[str], None] | None):
        self.check = check
        self.on_text = on_text
        self.buffer = ""
        self.verdicts: list[Verdict] = []
        self.kept: list[str] = []
        self._said: set[str] = set()  # content words of the kept sentences
        self._failed_run = 0
        self.enough = ""  # why the rest of the generation is not worth reading ("" = go on)

    def feed(self, piece: str) -> None:
        self.buffer += piece
        while not self.enough:
            m = _SENTENCE.search(self.buffer)
            if m is None:
                return
            sentence, self.buffer = self.buffer[:m.start()], self.buffer[m.end():]
            self._decide(sentence)

    def lead(self, sentence: str, check: Callable[[str], Verdict] | None = None) -> None:
        """A whole sentence said before the model's (the figure a quoted table row gives, see
        ``retrieve.figures``): checked (by ``check`` when given), kept and shown as a generated
        one would be, so the model's own sentences that only repeat it are dropped as repeats."""
        self._decide(sentence, check)

    def finish(self) -> str:
        if not self.enough:  # after a stop, the buffer holds a sentence cut in the middle
            self._decide(self.buffer)
        self.buffer = ""
        return " ".join(self.kept)

    def _decide(self, sentence: str, check: Callable[[str], Verdict] | None = None) -> None:
        sentence = sentence.strip()
        if not sentence or not re.search(r"\w", CITATION.sub("", sentence)):
            return
        verdict = (check or self.check)(sentence)
        words = query_terms(verdict.text) - FREE_WORDS
        if verdict.ok and self.kept and words <= self._said:
            verdict = Verdict(verdict.sentence, verdict.text, verdict.cited, False,
                              "repeats what the answer already said", [], verdict.support)
            self.enough = "the model repeats itself"
        self.verdicts.append(verdict)
        self._failed_run = 0 if verdict.ok else self._failed_run + 1
        if self._failed_run >= MAX_FAILED_RUN:
            self.enough = f"{self._failed_run} sentences in a row failed their check"
        if verdict.ok:
            self._said |= words
            if len(self.kept) + 1 >= MAX_KEPT:
                self.enough = f"{MAX_KEPT} sentences: a short answer is complete"
            shown = _with_citations(verdict)
            if self.on_text is not None:
                self.on_text(("" if not self.kept else " ") + shown)
            self.kept.append(shown)

    @property
    def dropped(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.ok]


def _with_citations(verdict: Verdict) -> str:
    """The sentence as shown: its text, then the quotes it rests on as [n]."""
    text = verdict.text.rstrip()
    end = text[-1] if text and text[-1] in ".!?" else ""
    body = text[:-1] if end else text
    marks = "".join(f"[{n}]" for n in verdict.cited)
    return f"{body} {marks}{end or '.'}"
