"""Do the retrieved passages cover the question at all? (the "not in your notes" gate)"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..types import Hit
from ..words import asks_figure, done_without, folded, forms, query_terms, without_notes_frame
from .spelling import is_common_word, is_known_word

# Relevance gate, calibrated on the Obsidian help vault (bench/bench_ask.py --calibrate):
# the best hit's cosine (all-MiniLM-L6-v2) and how many of the question's content words
# the best hits contain. See relevant() for the rule.
MIN_COSINE = 0.45  # at or above: relevant, whatever the words say
LOW_COSINE = 0.30  # below: not relevant, whatever the words say
MIN_TERM_COVERAGE = 0.5  # in between: relevant when half the question's words are in the hits


# Words that say when or how ("right away", "gone for good"), stand for anything at all ("without
# losing anything"), or frame a comparison ("the difference between"): a note that answers need not
# use them, and "No note mentions “right”, “away”" refused "how do I install my package so edits show
# up right away?"
_NO_SUBJECT = re.compile(r"\b(?:right (?:away|now)|straight away|at once|for good|by (?:mistake|accident)|on purpose|"
                         r"at all|differences? between|(?:all )?over again|again|(?:each|every) time|"
                         # "keep themselves up to date": a pronoun, whatever it stands for
                         r"(?:my|your|our|them|him|her|it|one)sel(?:f|ves)|"
                         # "in actual numbers": the form of the answer, which a figure gives
                         r"in (?:actual|real|exact|hard|concrete|plain) (?:numbers|figures|terms|words)|"
                         # "the electric grinder I wrote about": which note, not what is asked of it
                         r"(?:i|we)(?:'ve| have| had)? (?:ever |once |already )?(?:wrote|written|jotted|noted|logged)"
                         r"(?: (?:down|up))?(?: (?:about|on))?)\b|"
                         r"\b(?:any|some|every|no)(?:thing|one|body|where)\b|\belse\b|"
                         # "what happens past that?", "what could cause it?": asking for what follows, or why
                         r"\bwhat (?:happens|happened|(?:will|would|could) happen|"
                         r"(?:(?:could|would|might|can) )?caus(?:e|es|ed))\b|"
                         r"\b(?:past|beyond|above|below) (?:that|it|this|them)\b|"
                         # "how come DPR is fast ... even though it uses BERT", "my espresso comes out sour":
                         # the asking and the joining, not what is asked about
                         r"\bhow come\b|\b(?:even )?(?:al)?though\b|\beven (?:if|when|so)\b|"
                         r"\b(?:come|comes|came|coming) (?:in|out|up|back|through)\b", re.I)


def _asked_terms(question: str) -> set[str]:
    """The question's content words less those no note need use (``_NO_SUBJECT``, ``NOTES_FRAME``)."""
    return query_terms(_NO_SUBJECT.sub(" ", without_notes_frame(question)))


def term_coverage(question: str, hits: Sequence[Hit], top: int = 3) -> float:
    """Share of the question's content words found in the best hits (title, heading, text)."""
    terms = query_terms(question)
    if not terms:
        return 0.0
    return len(terms & set().union(*_best_hits_terms(hits, top))) / len(terms)


def _best_hits_terms(hits: Sequence[Hit], top: int) -> list[set[str]]:
    """The content words of each of the ``top`` best hits (title, heading, text)."""
    return [query_terms(f"{h.chunk.title} {h.chunk.heading} {h.chunk.text}")
            for h in sorted(hits, key=lambda h: h.rank)[:top]]


def holds_every_word(question: str, hits: Sequence[Hit], top: int = 3) -> bool:
    """Does one of the best hits hold every content word of the question (``every_word_held``)?
    "What did I write about channeling?" is the Espresso note's "Channeling shows up as spritzing",
    whose cosine to the question (0.03) says the embedding model does not know the word, not that
    the note is off."""
    wanted = _wanted_terms(question)
    return bool(wanted) and any(wanted <= held for held in _best_hits_terms(hits, top))


def every_word_held(question: str, texts: Iterable[str]) -> bool:
    """Does one of the texts hold every content word of the question that is not everyday English?"""
    wanted = _wanted_terms(question)
    return bool(wanted) and any(wanted <= query_terms(text) for text in texts)


def _wanted_terms(question: str) -> set[str]:
    """The question's content words a passage must hold. "how do i avoid channeling", "what does WDT
    mean" say in everyday words ("avoid", "mean") what the note says its own way; a question of
    everyday words only needs all of them but the doing a how-to asks ("avoid"), and one asking a
    figure needs every word ("How much did the Hunter X-Core timer cost?": no note says "cost")."""
    terms = _asked_terms(question)  # "what did I write about channeling?": channeling
    if asks_figure(question):
        return terms
    rare = {t for t in terms if not is_common_word(t)}
    # of everyday words only, the doing asked ("how do i avoid channeling") is the one a note says its
    # own way ("Distribute with a needle tool (WDT) before tamping. Channeling shows up as ...")
    doing = _DOING.search(question)
    done = query_terms(doing.group(1)) if doing else set()
    return rare or (terms - done) or terms


# "how do I avoid ...", "how can we keep ...", "how to stop ...": the verb of a how-to question
_DOING = re.compile(r"\bhow (?:(?:do|can|should|would|could) (?:i|you|we|one)|to) (\w+)", re.I)


def relevant(question: str, hits: Sequence[Hit], min_score: float = -1.0) -> bool:
    """Do the hits cover the question? ``min_score >= 0`` replaces the calibrated rule by
    a plain threshold on the best hit's cosine (or fused score when no cosine is known)."""
    if not hits:
        return False
    cosines = [h.vector_score for h in hits if h.vector_score is not None]
    best = max(cosines) if cosines else None
    if min_score >= 0:
        return (best if best is not None else max(h.score for h in hits)) >= min_score
    coverage = term_coverage(question, hits)
    if best is None:  # keyword-only retrieval: words are all the evidence there is
        return coverage >= MIN_TERM_COVERAGE
    if best >= MIN_COSINE or holds_every_word(question, hits):
        return True
    return best >= LOW_COSINE and coverage >= MIN_TERM_COVERAGE


# A name in a question: a capitalised word that does not open a sentence, an acronym, a
# CamelCase or mixed word ("Zotero", "PyPI", "ColBERT", "X-Core"), or a quoted term. Capitalised
# words in a row are one name: notes that say "Google" and "calendar" apart do not name
# "Google Calendar", and "Natural Questions" is the name the notes use whole.
_CAPITAL = r"[A-Z][\w-]*[A-Za-z0-9]|\d+[A-Z][A-Za-z0-9]*"  # ... or a number's name: "3D", "4K", "2FA"
_NAME = re.compile(rf"(?<![.?!]\s)(?<!^)(?<![\w'-])((?:{_CAPITAL})(?:\s+(?:{_CAPITAL}))*)(?![\w'])"
                   r"|[\"“]([^\"”]{2,40})[\"”]")
_NOT_NAMES = frozenset({"I", "I'm", "I've", "OK"})
# An acronym's plural names what its singular does: "ANDAs" are what a report calls "ANDA"
_ACRONYM_PLURAL = re.compile(r"\b([A-Z][A-Z0-9]+)s\b")
# A month or a day is a date, not a thing the notes must name ("a note created on 1 January")
_CALENDAR = frozenset("january february march april may june july august september october november december "
                      "monday tuesday wednesday thursday friday saturday sunday".split())


# A name the question likens its ask to is not what it asks about: "type in several spots at once,
# like in VS Code" asks for multiple cursors in the notes' app, which the notes never compare to VS Code.
_LIKENED = re.compile(r"\b(?:like|as in|as with|similar to|the way)\s+(?:(?:in|on|with|at)\s+)?(?:the\s+)?\W*$", re.I)


def without_likened(question: str) -> str:
    """The question less the names it only likens its ask to: their words are not the answer's
    ("like in VS Code" drew the notes on formatting code)."""
    text = question.strip()
    likened = [m.group(1) for m in _NAME.finditer(text) if m.group(1) and _likened(text, m.start())]
    for name in likened:
        text = text.replace(name, " ", 1)
    return " ".join(text.split()) if likened else question


def _likened(question: str, start: int) -> bool:
    return bool(_LIKENED.search(question, 0, start))


def names_in(question: str) -> list[str]:
    """The names a question uses (see _NAME), in its order. None in a question typed in title
    case or capitals, where a capital says nothing, and none of two letters: "ID", "PC" and "OS"
    are words in capitals more than names ("roll the app out to every staff PC"); a number's
    name is one ("make the graph view 3D")."""
    words = re.findall(r"[A-Za-z][\w'-]*", question)
    if len(words) > 2 and sum(w[0].isupper() for w in words) * 2 > len(words):
        return []
    names = []
    question = question.strip()
    for m in _NAME.finditer(question):
        name = _ACRONYM_PLURAL.sub(r"\1", m.group(1) or m.group(2) or "")
        if _likened(question, m.start()):
            continue
        if name and (len(name) > 2 or name[0].isdigit()) and name not in _NOT_NAMES and name.lower() not in _CALENDAR:
            names.append(name)
    return list(dict.fromkeys(names))


def names_not_in(names: Sequence[str], texts: Sequence[str]) -> list[str]:
    """Those of ``names`` with a word none of ``texts`` holds, case aside. Word by word: a run of
    capitals often holds a plain word ("IRS Publication 17" in a text that says "IRS" and
    "Publication 17"); "Google Calendar" in notes that say them apart is ``unknown_names``' to read.
    Letters and digits are words apart, so "FY2016" is in "FY 2016" and in "report_fy2016.pdf".
    A name's word that opens a word held is held: "Mac" is said by "macOS", "Win" by "Windows"."""
    held = set(_name_words("\n".join(texts)))
    return [n for n in names if not all(_held(w, held) for w in _name_words(n))]


def _held(word: str, held: set[str]) -> bool:
    return word in held or len(word) >= 3 and not word.isdigit() and any(h.startswith(word) for h in held)


def _name_words(text: str) -> list[str]:
    return re.findall(r"[a-z]+|\d+", folded(text).lower())


def unknown_names(question: str, df: Callable[[list[str]], list[int]]) -> list[str]:
    """The names in the question that no chunk holds: a question about Zotero is not answered
    by notes that never say "Zotero", however close the nearest passage is in meaning."""
    names = names_in(question)
    if not names:
        return []
    phrases = ['"' + " ".join(re.findall(r"\w+", n)) + '"' for n in names]
    return [n for n, p, count in zip(names, phrases, df(phrases)) if p != '""' and count == 0]



_WORDS = re.compile(r"(?<![\w'-])[a-z]{4,}(?![\w'-])")


# A verb's particle says which way, not what: "take that back" is the note's "undo", "throw away"
# its "discard", "hunt down" its "find". What the question asks to do without ("without losing my
# edits") is a constraint the answer keeps in its own words ("keep the changes"): neither need be a
# word of the notes. (Session 32: no unanswerable question of any set has an unheard word of either.)
_PARTICLES = frozenset({"back", "away", "down"})


def unheard_words(question: str, df: Callable[[list[str]], list[int]],
                  respell: Callable[..., dict[str, str]] | None = None) -> list[str]:
    """The question's lower-case words of four letters or more (not its frame) that no chunk
    holds in any form: asked whether Obsidian reads notes "out loud", notes that never say
    "loud" may answer about reading, not about that. Said beside the passages, so the reader
    knows what was matched in other words, or not at all. ``respell`` (the index's): a slip a
    letter from a word the notes hold ("grnder", "espreso") is that word, as the search read it."""
    asked = _asked_terms(question) - done_without(question) - _PARTICLES  # not the frame: "long" in "how long"
    words = [w for w in dict.fromkeys(_WORDS.findall(folded(question))) if query_terms(w) and query_terms(w) <= asked]
    if not words:
        return []
    # in any form: a note that says "go" holds the "goes" of "what goes in the puck prep"
    unheard = [w for w, count in zip(words, df([" OR ".join(f'"{f}"' for f in forms(w)) for w in words])) if count == 0]
    unheard = [w for w in unheard if not _written_apart(w, df)]
    slips = respell(unheard, leave=is_known_word) if respell is not None and unheard else {}
    # a letter dropped or two swapped ("grnder", "recieve"), not another word's letters: the
    # search's fixes of words its vocabulary lacks ("transcribe" -> "transcript", "invent" ->
    # "indent") would hide what the notes do not say
    return [w for w in unheard if not (w in slips and set(w) <= set(slips[w]))]


_HALF = 3  # letters each half of a word written as two has at least


def _written_apart(word: str, df: Callable[[list[str]], list[int]]) -> bool:
    """Do the notes write the word as two ("keybindings": "Vim key bindings", "screenshot": "screen
    shot")? A phrase of its two halves, split anywhere, that some chunk holds."""
    splits = [f'"{word[:k]} {word[k:]}"' for k in range(_HALF, len(word) - _HALF + 1)]
    return bool(splits) and any(df([" OR ".join(splits)]))


# A word no note uses may still be what a quote says in other words: "wipe the login it saved" is
# the Headless note's "clear stored credentials", a "loaf" is the Sourdough note's dough. The
# nearest word of the quotes, by the embedding model's meaning of single words, at or above this
# cosine, says it. Calibrated on the tune half of the bench sets (`bench/bench_answers2.py`, see
# bench/ISSUE19.md): answerable questions' unheard words have a neighbour at 0.50-0.77 ("wipe" /
# "clear" 0.54, "loaf" / "dough" 0.58, "combos" / "combination" 0.70), unanswerable ones' under
# 0.42 ("steeping" / "coarse" 0.40, "loud" / "written" 0.38, "hotel" / "places" 0.47 on the check half).
SAID_OTHERWISE = 0.50
_QUOTE_WORDS = 300  # distinct words of the quotes compared (a few quotes hold fewer)


def said_otherwise(words: Sequence[str], texts: Sequence[str], embed: Callable[[list[str]], np.ndarray],
                   most: int = _QUOTE_WORDS, floor: float = SAID_OTHERWISE) -> list[str]:
    """Those of ``words`` that some content word of ``texts`` is close to in meaning, ``floor`` or
    nearer (the first ``most`` distinct words of the texts read)."""
    if not words:
        return []
    said = dict.fromkeys(w for text in texts for w in _TEXT_WORDS.findall(text.lower()) if query_terms(w))
    candidates = [w for w in said if w not in words][:most]
    if not candidates:
        return []
    vectors = embed(list(words) + candidates)  # unit rows, from every embedder
    nearest = (vectors[:len(words)] @ vectors[len(words):].T).max(axis=1)
    return [w for w, sim in zip(words, nearest) if sim >= floor]


_TEXT_WORDS = re.compile(r"[a-z][a-z0-9-]{2,}")
