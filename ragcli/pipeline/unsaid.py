"""What a question asks that the notes do not say: a word no note holds that no passage read says
in other words, the thing a part asks for ("which brand"), a quality no passage names ("how
hard"). The answer flow (``answer``) reads these to refuse, to hedge, or to say a part is missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..retrieve.parts import asked_quality, points_back
from ..retrieve.relevance import said_otherwise, unheard_words
from ..retrieve.spelling import is_common_word
from ..types import Hit, Quote
from ..words import MEASURES, answer_type, asks_figure, holds_figure, query_terms


# "which brand of flour", "how much fertiliser": the thing a part asks for ("what" is as often a
# verb's subject: "what goes")
_ASKED_THING = re.compile(r"\b(?:which|how\s+(?:much|many))\s+([a-z][a-z-]+)")
# ... said in other words only by a word this close: a word of the same topic comes within
# SAID_OTHERWISE ("fertiliser" / "irrigation" 0.50 in the watering schedule), and a figure of
# that topic (the schedule's minutes) is no amount of the thing asked
THING_SAID = 0.60


def asked_thing(question: str) -> str:
    """The thing a question asks for ("hotel" in "which hotel are we staying at"), or ""."""
    asked = _ASKED_THING.search(question.lower())
    return asked.group(1) if asked else ""


def unheard_in(text: str, searcher, quotes: Sequence[Quote] = ()) -> list[str]:
    """``unheard_words`` of the text against the searcher's index, slips of its words read as them,
    and less the words that name the kind of figure a quote gives (``figure_named``)."""
    unheard = unheard_words(text, searcher.index.keyword_df, searcher.index.respell)
    named = figure_named(text, quotes) if unheard and quotes else set()
    return [w for w in unheard if w not in named]


def asks_what_no_note_says(part: str, quotes: Sequence[Quote], searcher) -> bool:
    """Is this part of the question one the quotes do not answer, though its best unit scored
    well enough? Its score alone cannot tell: "which brand of flour do I buy" (0.40) is read with
    the question's subject and scores among answered parts (0.36 and up). It is not answered when
    it uses a word no note holds that no word of the quotes says in other words, and that word is
    the thing the part asks for ("which brand"), or none of the part's other words is quoted
    ("can it transcribe my voice memos"). A figure of the kind asked, quoted, answers it, unless
    the thing asked is one no quote names, nor a word close to it (``THING_SAID``)."""
    unheard = unheard_in(part, searcher)
    if not unheard:
        return False
    texts = [evidence_text(q) for q in quotes]
    thing = asked_thing(part)
    if thing in unheard and not said_otherwise([thing], texts, searcher.embed_passages, floor=THING_SAID):
        return True
    unsaid = [w for w in unheard if w not in said_otherwise(unheard, texts, searcher.embed_passages)
              and not is_common_word(w)]
    if not unsaid or (asks_figure(part) and any(holds_figure(q.text, part) for q in quotes)):
        return False
    quoted = set().union(*(query_terms(t) for t in texts)) if texts else set()
    others = query_terms(part) - query_terms(" ".join(unsaid))
    return not (others & quoted)


def with_parts_that_follow(parts: Sequence[str], missing: Sequence[str], unheard: Sequence[str] = ()) -> list[str]:
    """The parts missing, and each part after one missing that asks about the same thing: one with
    no word of its own ("how much fertiliser should the tomatoes get, and how often?" asks how
    often to feed them, and the watering schedule's "every day" answers another question), or one
    that points back to the thing the part before asks for, when no note names it ("which hotel
    did we book ..., and how far is it from the metro?": the metro card's line is about no hotel)."""
    out = list(missing)
    for before, part in zip(parts, parts[1:]):
        if before in out and part not in out and (
                not query_terms(part) or asked_thing(before) in unheard and points_back(part)):
            out.append(part)
    return out


# The words that name the kind of figure asked: "what milk temperature for a latte?" is answered by "Steam
# whole milk to 60 °C" though no note says "temperature"
_FIGURE_NAMES = frozenset({"temperature", "temperatures", "cost", "costs", "price", "prices", "percentage",
                           "percent", "proportion", "fraction", "date", "duration",
                           *(asks.split("|")[0] for asks, _unit in MEASURES)})  # "voltage", "pressure", ...


def figure_named(asked: str, quotes: Sequence[Quote]) -> set[str]:
    """The question's words that name the kind of figure it asks for, when a quote holds one of
    that kind and every other word of the question: no note need say "temperature" to say "60 °C"
    of the milk. The milk's 60 °C is no water temperature for espresso: "temperature" stays unsaid."""
    names = set(re.findall(r"[a-z]+", asked.lower())) & _FIGURE_NAMES
    if not names or answer_type(asked) is None:
        return set()
    rest = query_terms(asked) - query_terms(" ".join(names))
    return names if any(holds_figure(q.text, asked) and rest <= query_terms(evidence_text(q)) for q in quotes) \
        else set()


def asks_a_quality_no_passage_says(part: str, hits: Sequence[Hit], searcher) -> bool:
    """Does this part ask a quality ("how hard should the water be") that no passage read for the
    question names, in its words or in others close in meaning? The notes read for "how wet is my
    dough" say "dry" and "hydration" (0.78 and 0.55 to "wet"); the coffee notes read for "how hard"
    come no nearer than "slow" (0.46). Read against every passage read, not only the quotes: a quote
    picked for the part's other words ("dough") may miss the one that names the quality."""
    quality = asked_quality(part)
    if not quality:
        return False
    read = [hit_text(h) for h in hits]
    if query_terms(quality) <= set().union(*(query_terms(t) for t in read)):
        return False
    return not said_otherwise([quality], read, searcher.embed_passages)


SAID_HITS = 5  # the best hits whose words may say a question's word otherwise, beside the quotes
SAID_WORDS = 800  # ... their distinct words read: 5 chunks hold 300 to 500


def said_in_other_words(unheard: Sequence[str], quotes: Sequence[Quote], hits: Sequence[Hit], searcher) -> list[str]:
    """The words no note uses that the quotes, or else the best hits, say in other words. The
    hits' words are read only for what the quotes do not say: a few hundred single words to
    embed, 0.5 s on a loaded 2-core machine, cached for the next question."""
    said = said_otherwise(unheard, [evidence_text(q) for q in quotes], searcher.embed_passages)
    rest = [w for w in unheard if w not in said]
    return said + (said_otherwise(rest, _hit_texts(hits), searcher.embed_passages, most=SAID_WORDS) if rest else [])


def _hit_texts(hits: Sequence[Hit]) -> list[str]:
    """The best hits' text (title, heading, passage), where a word of the question no note uses
    may be said otherwise though no quote says it: for "I wiped out a paragraph ... can I get an
    earlier copy back", the quotes' nearest word is 0.46 from "wiped", the hits' 0.56. On the tune
    half this answers two paraphrases refused before (pp-51; pp-77 "matrices", 0.40 -> 0.62); the
    unanswerable questions' words come no nearer in the hits than in the quotes ("steeping"
    0.44, "hotel" 0.47, "staying" 0.48, under SAID_OTHERWISE)."""
    return [hit_text(h) for h in sorted(hits, key=lambda h: h.rank)[:SAID_HITS]]


def hit_text(h: Hit) -> str:
    return f"{h.chunk.title}\n{h.chunk.heading}\n{h.chunk.text}"


def evidence_text(q: Quote) -> str:
    """What a sentence citing quote n may rest on: the quote, its table header, where it stands."""
    parts = [q.title, q.heading.replace(" > ", " "), q.context, q.text]
    return "\n".join(p for p in parts if p)
