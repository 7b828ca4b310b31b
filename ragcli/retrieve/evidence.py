"""Evidence: the passages of the retrieved chunks that answer the question, as exact quotes.

A chunk is ~200 tokens; the answer usually sits in one sentence, list item, table row or a
few lines of code. ``split_units`` cuts each retrieved chunk into such units, each with its
own file lines (and PDF page). ``select_quotes`` scores them against the question with what
is already loaded, no generator involved:
- meaning: cosine between the question and the unit (the embedding model; units are short,
  so they pack many to a llama.cpp batch), the unit read with its title and heading;
- words: the question's content words the unit holds, weighted by their idf in the index
  (a rare word shared says more than a common one);
- place: a small bonus for units of better-ranked chunks.
The best few, above a floor relative to the best, become numbered quotes. They are shown
before any generation, and they are all the generator is given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..types import Hit, Quote
from ..words import (answer_type, asks_figure, asks_how, asks_list, asks_reason, asks_whether, done_without,
                     holds_figure, query_terms, says_verdict, says_without)
from .between import with_sentences_between
from .definitions import defined_thing, defines
from .following import with_next_figure, with_reason
from .sections import heading_text
from .parts import its_own, refers_back
from .once import dedupe_contained, inside, said_once, same_words, says_more, units_once
from .padding import BLOCK_KINDS, STEP_SENTENCE, best_pads, without_padding
from .steps import is_list, is_procedure, other_steps, steps_holding, steps_whole, whole_lists
from .passages import unit_context, word_scores
from .units import MAX_PASSAGE_CHARS, Unit, split_units

__all__ = ["Unit", "split_units", "select_quotes"]

MAX_UNITS = 36  # units embedded per question (the best by words, then by chunk rank)
MAX_QUOTES = 3
MAX_PER_CHUNK = 2
RELATIVE_FLOOR = 0.8  # a quote scores at least this share of the best quote's score
# A paragraph is quoted whole around its best sentence up to units.MAX_PASSAGE_CHARS; for a question
# asking whether ("Can I put a password on just one of my published notes?") up to this, as the rest
# of the paragraph holds the condition or the "but": session 31, every set quotes only, yes/no recall
# 0.909 -> 0.941 (two answers gain on each half), 2-4 words more a question there and on the
# paraphrases, no answer loses recall.
MAX_WHETHER_PASSAGE_CHARS = 400
W_MEANING, W_WORDS, W_PLACE = 0.6, 0.35, 0.05
# A question (or part) that asks for a figure of a kind is answered by a unit that holds one: "how
# long should the shot take" by "in 25 to 30 seconds", not by "takes about three shots". (A bonus
# for holding any figure at all, 0.06, was dropped in session 13: without it two reports answers
# gained recall and as many lost words, and none lost.)
W_TYPE = 0.15
# "How do I ..." is answered by a procedure: code, or a lead-in with the steps it introduces.
# A sentence ending in a colon whose block is not with it (an embed expanded in its place)
# promises what it does not hold.
W_PROCEDURE = 0.05
# A part's words are read beside its question's: "how long should the shot take" is about the
# espresso the question began with, so a unit of the Espresso note beats one of Pour over.
W_SUBJECT = 0.3
# The units under the heading closest in meaning to the question, of all the sections read: a
# heading names the task its section does ("Nesting lists" for "put numbered and bulleted lists
# inside each other"), where the units under it are code or items in the notes' own terms.
# Tuned on the tune halves: 0.02, 0.03 and 0.05 give the same how-to and multi-part figures
# (howto recall 0.825 -> 0.843); 0.05 costs the answers set recall (0.888 -> 0.872, 0.884 at
# 0.03); 0.1 costs multipart recall (0.899 -> 0.886). Like the other bonuses it picks among
# units and never raises the score the "not covered" gate reads.
W_HEADING = 0.03
# A unit that holds none but the question's words (and its heading's) says nothing the question
# did not: the list item "Obsidian Sync" for "Can I get a refund for Obsidian Sync?", the link
# "Create a base" for "How do I create a base?". Its lead-in or its neighbours say the answer.
W_ECHO = 0.1
# Asked whether ("... — can I also run the command-line client on that same machine?"), a unit that
# gives a verdict ("Do not use both ... on the same device") answers (``words.says_verdict``). Session 33,
# every set: 2 gain on the tune halves (as-25 0.14 -> 1.00), 4 read 15-50 words fewer at the same
# recall, 1 loses a little (us-16 0.35 -> 0.29); 0.15 costs yes/no recall (0.941 -> 0.921).
W_VERDICT = 0.05
_IN_ORDER = re.compile(r"\b(?:steps?|stages?|phases?|order|sequence)\b", re.I)


# ----------------------------------------------------------------------------- scoring


@dataclass
class Evidence:
    """The chosen quotes, and for a question of several parts, which part each answers and
    which parts no unit answers well enough (``missing``)."""

    quotes: list[Quote]
    parts: list[str]
    part_scores: list[float]  # the best unit's score for each part
    missing: list[str]
    # where each part's chosen unit stands ((path, page, first line), as its quote's ``place``),
    # None for a part no unit answers: a part found missing later takes its quote with it
    part_places: list[tuple | None] = field(default_factory=list)
    # where the best quote stands when it only pads the others (``padding.best_pads``): the gate
    # reads it, then the answer lets it go
    padding_place: tuple | None = None


def select_quotes(question: str, hits: Sequence[Hit], embed: Callable[[list[str]], np.ndarray],
                  idf: Callable[[list[str]], dict[str, float]], qvec: np.ndarray | None = None,
                  max_quotes: int = MAX_QUOTES) -> list[Quote]:
    """The few units that best answer ``question``, numbered from 1, best first."""
    return select_evidence(question, hits, embed, idf, qvec=qvec, max_quotes=max_quotes).quotes


def select_evidence(question: str, hits: Sequence[Hit], embed: Callable[[list[str]], np.ndarray],
                    idf: Callable[[list[str]], dict[str, float]], parts: Sequence[str] = (),
                    qvec: np.ndarray | None = None, max_quotes: int = MAX_QUOTES,
                    part_floor: float = 0.0, focus: str = "") -> Evidence:
    """Quotes that cover the question: for a question of several parts, the best unit of each
    part first (a part whose best unit scores under ``part_floor`` is ``missing``), then the
    best of the rest by the whole question's score.

    ``focus``: the words the user typed when ``question`` is their chat follow-up made to stand
    alone. The rest is scored by the focus read beside the question, as a part is: "What ratio?"
    after the espresso clicks asks for the Espresso recipe's 1:2, not the grinder's table again,
    which "What ratio (many clicks for espresso on my grinder)?" matches best."""
    parts = list(parts) if len(parts) > 1 else []
    passage_chars = MAX_WHETHER_PASSAGE_CHARS if asks_whether(question) else MAX_PASSAGE_CHARS
    units = units_once([u for hit in hits for u in split_units(hit, passage_chars)])
    every_unit = units  # a list whole, for an item of a short one (``whole_lists``)
    if not asks_list(question):  # a table whole answers what there is to choose from, and takes a place
        units = [u for u in units if u.kind not in ("table", "list")]  # among those a row or item would have
    if not units:
        return Evidence([], parts, [0.0] * len(parts), list(parts), [None] * len(parts))
    focus = focus if focus and query_terms(focus) else ""
    asks = [question] + parts + ([focus] if focus else [])
    words = [word_scores(a, units, idf) for a in asks]
    # Embed only the most promising units: by words (the best for any part), then in chunk order.
    best_words = [max(w[k] for w in words) for k in range(len(units))]
    order = sorted(range(len(units)), key=lambda k: (-best_words[k], units[k].hit.rank, k))[:MAX_UNITS]
    queries = (([question] if qvec is None else []) + [_part_query(p, question) for p in parts]
               + ([_part_query(focus, question)] if focus else []))
    sections = list(dict.fromkeys((units[k].chunk.title, units[k].chunk.heading) for k in order))
    vectors = embed(queries + [unit_context(units[k]) for k in order] + [heading_text(*s) for s in sections])
    q = qvec if qvec is not None else vectors[0]
    part_vecs = vectors[len(queries) - len(parts) - bool(focus):len(queries) - bool(focus)]
    unit_vecs = vectors[len(queries):len(queries) + len(order)]
    heading_vecs = vectors[len(queries) + len(order):]
    named = _closest_section(sections, heading_vecs, q)

    # each unit's words beyond its heading's, stemmed once for every part scored below
    beyond_heading = [query_terms(units[k].text) - query_terms(heading_text(units[k].chunk.title, units[k].chunk.heading))
                      for k in order]

    steps_of = steps_holding(units, order)
    # a chat follow-up's own words ("what about a custom title?") ask how when their question does
    how = asks_how(question) or bool(focus) and asks_how(focus)

    def scores(vec, w, ask: str, named=named) -> list[tuple[float, float, int]]:
        """(rank, score, unit) best first: the score says how well a unit answers (the "not
        covered" gate reads it); the rank adds the bonus for holding the kind of figure asked,
        which picks among units but must not make a question look answered."""
        kind = answer_type(ask)
        thing = defined_thing(ask)  # "what is a vault": the sentence saying what one is
        listing = asks_list(ask)
        in_order = bool(_IN_ORDER.search(ask))  # a procedure answers "list the stages of my method"
        procedure = how if ask in (question, focus) else asks_how(ask)
        asked, spared = query_terms(ask) | query_terms(question), done_without(ask)
        whether = asks_whether(ask)
        out = []
        for pos, k in enumerate(order):
            base = (W_MEANING * float(np.dot(unit_vecs[pos], vec)) + W_WORDS * w[k]
                    + W_PLACE / math.sqrt(units[k].hit.rank or 1))
            unit = units[k]
            bonus = W_TYPE if kind is not None and holds_figure(unit.text, ask, unit.chunk.heading) \
                or defines(unit.text, thing) or says_without(unit.text, spared) else 0.0
            bonus += W_VERDICT if whether and says_verdict(unit.text) else 0.0
            if listing and is_list(unit) and (not is_procedure(unit) or in_order):  # "what callout types are there"
                bonus += W_TYPE
            elif unit.kind == "steps" and not procedure:
                # a whole list answers "how do I" or "what do I need", not "what pressure": the item
                # holding it does, so the list must beat its best item by more than a bonus
                bonus = -W_PROCEDURE
            # ... and so is a sentence that gives one (``STEP_SENTENCE``: "To create a callout, add
            # `[!info]` ..."), where the section's opening sentence says what, not how
            if procedure and (unit.kind in BLOCK_KINDS or STEP_SENTENCE.search(unit.text)):
                bonus += W_PROCEDURE
            if unit.kind != "block" and unit.text.rstrip().endswith(":"):
                bonus -= W_PROCEDURE
            if (unit.chunk.title, unit.chunk.heading) == named:
                bonus += W_HEADING
            if unit.kind != "code" and not beyond_heading[pos] - asked:
                bonus -= W_ECHO
            out.append((base + bonus, base, k))
        if procedure:
            out = steps_whole(out, steps_of, W_PROCEDURE)
        return sorted(out, key=lambda s: -s[0])

    if focus:  # the follow-up's own words lead; its subject, from the turn before, is read beside them
        whole = scores(*_beside(vectors[len(queries) - 1], words[-1], q, words[0]), focus)
    else:
        whole = scores(q, words[0], question)
    overall = {k: base for _rank, base, k in whole}
    chosen: list[tuple[float, Unit]] = []
    for_parts: list[Unit] = []  # the unit each answered part chose, shown already or not
    part_scores, missing, part_places = [], [], []
    # parts on one subject ("what text styles can I use, and what's the syntax for each") share their quotes
    apart = len(parts) > 1 and not any(refers_back(p, parts[i - 1]) for i, p in enumerate(parts) if i)
    for i, part in enumerate(parts):  # one quote per part, the part's best
        # the parts of one question share its subject: a part is read with the whole question
        # ("how long should the shot take" is about the espresso the question began with)
        # the part names its own section: "install the headless client" the Headless note's
        # "Install", where the whole question (and its voice memos) names none of the hits' better
        ranked = scores(*_beside(part_vecs[i], words[i + 1], q, words[0]), part,
                        named=_closest_section(sections, heading_vecs, part_vecs[i]))
        if asks_figure(part):  # "how long should the shot take": a unit holding a duration answers it,
            # however many of the part's words "takes about three shots" shares; none holding one: missing
            typed = [r for r in ranked if holds_figure(units[r[2]].text, part, units[r[2]].chunk.heading)]
            _rank, base, k = typed[0] if typed else ranked[0]
        else:
            typed, (_rank, base, k) = ranked, ranked[0]
            k = its_own(ranked, i, parts, units) if apart else k
        # Whether the part is answered is judged on the part alone: read with its question, a
        # unit on the question's subject scores well for "who is my dentist" too.
        alone = (W_MEANING * float(np.dot(unit_vecs[order.index(k)], part_vecs[i]))
                 + W_WORDS * words[i + 1][k] + W_PLACE / math.sqrt(units[k].hit.rank or 1))
        part_scores.append(alone)
        if not typed or alone < part_floor and not (i and refers_back(part, parts[i - 1])):
            missing.append(part)
            part_places.append(None)
            continue
        for_parts.append(units[k])
        part_places.append(place(units[k]))
        if all(u is not units[k] for _s, u in chosen):
            # the bonuses pick the unit shown; how well the part is answered is its best unit's
            # score, whichever is shown (the gate reads it)
            chosen.append((max(overall[k], max(b for _r, b, _k in typed)), units[k]))
    # A question asking a figure of a known kind (a duration, a price, a time) is answered by a
    # unit that states one, as a part is: "How long should an espresso shot take?" by "in 25 to
    # 30 seconds", not by "takes about three shots", which shares more of its words. The others
    # shown beside it must state one too, or they only add words.
    ask = focus or question
    kind_led = not parts and answer_type(ask) is not None
    in_about: list[tuple[float, float, int]] = []
    if kind_led:
        typed = [r for r in whole if holds_figure(units[r[2]].text, ask, units[r[2]].chunk.heading)]
        # from the note the question is about (its best unit's) when that note states one: "how
        # long should the shot take" is the Espresso note's 25 to 30 s, not the sourdough's 8 hours
        # (its best by how well it answers, not by the bonus for holding a figure)
        about = units[max(whole, key=lambda r: r[1])[2]].chunk.path
        in_about = [r for r in typed if units[r[2]].chunk.path == about]
        # another note's figure leads only where it would be quoted beside the best anyway: "When should
        # I pin exact versions?" is the Python note's "only in applications", not Home's "morning"
        typed = in_about or [r for r in typed if r[0] >= whole[0][0] * RELATIVE_FLOOR]
        kind_led = bool(typed)
        if typed:  # it changes which unit is shown, not whether the notes answer: the gate reads the
            # best unit's score, as it did before this rule
            chosen.append((max(typed[0][1], whole[0][1]), units[typed[0][2]]))
    thing = defined_thing(ask) if not parts else ()
    defining = [r for r in whole if defines(units[r[2]].text, thing)] if thing else []
    if defining:  # "what are properties": "Properties allow you to ...", though the CLI's "Commands
        # related to Properties" scores higher; it leads, and the gate reads the best unit's score
        chosen.append((max(defining[0][1], whole[0][1]), units[defining[0][2]]))
    best = whole[0][0]
    listed, top = not parts and asks_list(ask), max(b for _r, b, _k in whole)
    limit = max_quotes + max(0, len(parts) - 1)
    per_chunk: dict[str, int] = {}
    for _score, unit in chosen:
        per_chunk[unit.chunk.id] = per_chunk.get(unit.chunk.id, 0) + 1
    if not parts and not kind_led and how:
        chosen += other_steps(whole, units, best)
    for rank, base, k in whole:
        unit = units[k]
        if len(chosen) >= limit or rank < best * RELATIVE_FLOOR:
            break
        if per_chunk.get(unit.chunk.id, 0) >= MAX_PER_CHUNK or any(u is unit for _s, u in chosen):
            continue
        if any(same_words(u, unit) for _s, u in chosen):
            continue  # the same sentence at other lines (two chunks of a page overlap): one place
        if not says_more(unit, [u for _s, u in chosen]):
            # shown already (the other sentence of a quoted paragraph), or in other words ("Maximum
            # file size | 5 MB | 200 MB" beside "For the Standard plan the limit is 5 MB ..."): it
            # would only be read twice, and takes no place
            continue
        if kind_led and (not holds_figure(unit.text, ask, unit.chunk.heading) or in_about and unit.chunk.path != about):
            continue  # another note's figure is another thing's: "8 hours" is the dough's, not the shot's
        if unit.kind in ("steps", "table", "list") and not asks_how(question) and any(inside(u, unit) for _s, u in chosen):
            continue  # the item already quoted is the answer; its whole list would only add words
        per_chunk[unit.chunk.id] = per_chunk.get(unit.chunk.id, 0) + 1
        # a list shown for "what kinds are there" in place of its best item: the gate reads the
        # best unit's score, as it did before the list's bonus
        chosen.append((max(base, top) if listed and is_list(unit) else base, unit))
    if not parts:
        chosen.sort(key=lambda c: -c[0])
    if asks_reason(question):
        chosen = with_reason(chosen, units, overall, limit)
    if focus:
        chosen = _of_the_subject(chosen, question, focus)
    chosen = without_padding(chosen, ask, how, bool(parts), for_parts, named)
    pads = best_pads(chosen, ask, how, bool(parts), for_parts, named)
    kept = said_once(dedupe_contained(whole_lists(chosen, units, every_unit)), ask)
    added = dedupe_contained(with_next_figure(kept, units, overall, limit))
    # the next sentence may turn out to be shown already (inside a quoted block): then it takes no place
    kept = _in_reading_order(with_sentences_between(added if len(added) >= len(kept) else kept))
    quotes = [_quote(n, score, unit) for n, (score, unit) in enumerate(kept, 1)]
    return Evidence(quotes, parts, part_scores, missing, part_places, place(pads) if pads is not None else None)


def place(unit: Unit) -> tuple:
    """Where a unit stands, as ``quote_place`` reads its quote: a quote keeps its first line when
    a lead-in is given its block or the quotes are renumbered."""
    c = unit.chunk
    return (c.path, c.page, unit.passage[1] if unit.passage is not None else unit.line_start)


def quote_place(quote: Quote) -> tuple:
    return (quote.path, quote.page, quote.line_start)


def _beside(vec: np.ndarray, words: list[float], q: np.ndarray, question_words: list[float]):
    """A part (or a chat follow-up's own words) read beside its whole question: the two
    meanings summed, and the words weighed W_SUBJECT to the question's."""
    blend = vec + q
    return (blend / (np.linalg.norm(blend) or 1.0),
            [(1 - W_SUBJECT) * a + W_SUBJECT * b for a, b in zip(words, question_words)])


def _closest_section(sections: list[tuple[str, str]], vectors: np.ndarray, q: np.ndarray) -> tuple[str, str] | None:
    """The (title, heading) whose heading path is closest in meaning to the question; none when
    every unit stands under one heading (nothing to choose between)."""
    if len(sections) < 2:
        return None
    return sections[int(np.argmax(vectors @ q))]


def _of_the_subject(chosen: list[tuple[float, Unit]], question: str, focus: str) -> list[tuple[float, Unit]]:
    """A chat follow-up's quotes are of the subject it carries from the turn before: after the
    espresso's clicks, "What ratio?" is the espresso's 1:2, and the pour over's 1:16.7 (a ratio,
    of something else) only adds words. The quotes of a note that names none of the subject's
    words (in their text, title or heading) are left out, when another note's quotes name them."""
    subject = query_terms(question) - query_terms(focus)
    if not subject:
        return chosen
    naming = {u.chunk.path for _s, u in chosen
              if subject & query_terms(f"{u.chunk.title} {u.chunk.heading} {u.text}")}
    kept = [c for c in chosen if c[1].chunk.path in naming]
    return kept or chosen


def _part_query(part: str, question: str) -> str:
    """What a part is embedded as: itself when it says enough alone, else with the whole question
    around it ("for how long")."""
    return part if len(query_terms(part)) >= 2 else f"{part} ({question})"


def _in_reading_order(kept: list[tuple[float, Unit]]) -> list[tuple[float, Unit]]:
    """The quotes as the reader meets them: grouped under their note (in the order the notes
    first come), and within a note as the note runs (page, then line, each heading's quotes
    together), so the numbers run 1, 2, 3 down the page, not [1] [3] [2], and a note's export
    steps come before its import steps."""
    notes: dict[str, int] = {}
    first: dict[tuple, tuple] = {}
    for _score, unit in kept:
        c = unit.chunk
        notes.setdefault(c.path, len(notes))
        key = (c.path, c.heading, c.page)
        first[key] = min(first.get(key, (c.page or 0, unit.line_start)), (c.page or 0, unit.line_start))
    return sorted(kept, key=lambda c: (notes[c[1].chunk.path],
                                       first[(c[1].chunk.path, c[1].chunk.heading, c[1].chunk.page)], c[1].line_start))


def _quote(n: int, score: float, unit: Unit) -> Quote:
    c = unit.chunk
    if unit.passage is not None:
        text, start, end = unit.passage
        return Quote(n, text, "passage", c.path, c.title, c.heading, start, end, c.page, score)
    return Quote(n, unit.text, unit.kind, c.path, c.title, c.heading, unit.line_start, unit.line_end,
                 c.page, score, unit.context)
