"""The answer flow: retrieve, gate, pick the evidence, generate from it, check every sentence.

1. retrieve the best chunks and decide whether the notes cover the question at all;
2. pick the evidence (``retrieve.evidence``): the sentences, list items, table rows or code
   lines that answer it, as numbered quotes with their exact file lines. They reach the
   caller (``on_quotes``) before the model has produced anything; ``quotes_only`` stops here;
3. generate from the quotes only (``generate.prompt.fit_quotes``), asking for short
   sentences that each cite [n];
4. check each sentence as it completes (``generate.check``): a sentence whose numbers,
   names, dates or code are not in the quotes it cites, or whose words mostly are not, is
   dropped (``Answer.dropped`` says why). When nothing holds, the answer is the best quotes.
A question for a figure that a quoted table row clearly gives is answered by that figure
first (``retrieve.figures``), with or without the model: the row's value, label and header,
word for word, through the same checks as the model's sentences.

A stage function: it never prints. Tokens reach the caller through ``on_token``.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..config import Config
from ..generate import Generator, OnToken, make_generator
from ..generate.base import Enough
from ..generate.adds import adds_to_quotes
from ..generate.check import SentenceGate, Verdict, check_sentence
from ..generate.prompt import fit_quotes
from ..retrieve.evidence import Evidence, quote_place, select_evidence
from ..retrieve.spelling import is_common_word
from ..retrieve.tails import sections_as_read, untailed_hits
from ..retrieve.sections import with_matching_sections, with_sections
from ..retrieve.counts import direct_count
from ..retrieve.figures import direct_figure, quote_the_row
from ..retrieve.parts import asks_nothing, question_parts
from ..retrieve.relevance import (every_word_held, holds_every_word, names_in, names_not_in, relevant, unknown_names,
                                  without_likened)
from ..retrieve.pages import with_following, with_page_rows
from ..retrieve.beside import with_addition_after, with_answer_after, with_sentence_after
from ..retrieve.leads import with_section_leads
from ..retrieve.embedded import evidence_at_source
from ..retrieve.caveat import with_caveat
from ..retrieve.periods import of_the_years_asked
from ..retrieve.rule_before import (complete_lead_ins, with_callout_titles, with_line_above, with_row_headers,
                                    with_rule_before, with_whole_procedure)
from ..types import Answer, Hit, Quote, Source
from ..scene import context_words, of_scene
from ..words import asks_figure, asks_reason, holds_figure, query_terms, without_notes_frame
from .session import Session
from .unsaid import (asked_thing, asks_a_quality_no_passage_says, asks_what_no_note_says, evidence_text,
                     hit_text, said_in_other_words, unheard_in, with_parts_that_follow)

NOT_COVERED = "Your notes don't seem to cover this."
# The best quote's score (retrieve.evidence) below which the notes are taken not to answer.
# Calibrated on bench/questions/answers.jsonl (now `python bench/calibrate_gate.py`, with the users'-words sets):
# 12 of 15 unanswerable questions fall below it, 1 of 84 answerable ones (the nearest on
# each side: an unanswerable at 0.501, an answerable at 0.518).
EVIDENCE_FLOOR = 0.51
# Below the floor, the best passages are still shown (with a notice that they may answer it)
# when the best hit is close in meaning to the question, and the best quote is not far off:
# questions in a user's own words share fewer words with the note. Calibrated in bench/.
# Session 17 (`python bench/bench_answers2.py --quotes-only`, every vault set, bench/ISSUE19.md),
# 0.40 -> 0.35: answerable questions refused 32/160 -> 21/160 on the tune halves and 25/159 -> 18/159
# on the check halves (users' own words 5/60 -> 3/60, paraphrases 48/99 -> 34/99), unanswerable ones
# shown (as "may answer it") 6/23 -> 8/23 and 6/22 -> 7/22. No feature read here (quote score, hit
# cosine, the note centroid's cosine, unheard words) tells the two kinds apart in this band; a
# reader told "may answer it" loses less than one told to look elsewhere for a note that was found.
TENTATIVE_FLOOR = 0.35
# The best hit's cosine under which the question is refused before any quote is read. Session 19,
# 0.40 -> 0.33: paraphrases refused 34/99 -> 27/99 (tune 3, check 4; the expected note shown in 5),
# no unanswerable question of any set shown (the names and words no note holds, and the quote floor,
# refuse those in the band: the capital of Canada at 0.327, a pomodoro timer at 0.356).
STRONG_HIT = 0.33
# A part of the question whose best quote, read against the part alone, scores under this is said
# to be missing. `python bench/calibrate_gate.py --sets multipart`: uncovered parts score 0.03-0.40
# (4 of 6 under it, with the figure rule), covered ones 0.28 and up (none under it).
PART_FLOOR = 0.25
# A word no note uses makes an answer "may answer it" only while its best quote scores under this:
# over it, the quotes answer in other words ("how do I undo my last git commit without losing the
# changes?", 0.79) and are shown as the answer (the word stays in `not_mentioned`). Session 31
# (bench/ISSUE19.md): on the vault sets' tune half, 0.60 and up show no unanswerable question
# plainly (the highest, 0.600, asks Obsidian to transcribe audio) and lift the notice from 10
# answerable ones, none a wrong answer; on the check half 0.62 lifted 12, none wrong, no
# unanswerable one; on the PDF reports it showed one unanswerable question plainly (0.639, "how
# many dollars ... set aside"), so 0.65. A word of the scene hedges at any score: it names what the
# question is about ("I drink cold brew every morning, what ratio do I use?" quotes the pour-over
# ratio at 0.656).
UNHEARD_FLOOR = 0.65
PART_HITS = 3  # hits searched for each part of a question of several parts
OnQuotes = Callable[[list[Quote]], None]


def answer(config: Config, question: str, *, generator: Generator | None = None,
           on_token: OnToken | None = None, on_quotes: OnQuotes | None = None,
           retrieval_query: str | None = None, context: str = "", searcher: Any = None,
           quotes_only: bool = False) -> Answer:
    """Answer a question from the index. The caller may pass (and then owns) a generator and
    a ``retrieve.Searcher`` to reuse across questions, as a chat does.

    ``retrieval_query`` is what is searched (a chat's standalone rewrite of a follow-up);
    ``context`` is an earlier question shown to the model.

    The model loads in a thread while the index opens (chromadb's import alone is ~0.8 s).
    It must finish before the embedder loads: llama-cpp-python silences a load by pointing
    file descriptors 1 and 2 at /dev/null and back, and two loads at once can leave stdout
    pointing at /dev/null for good.
    """
    from ..retrieve import Searcher

    started = time.perf_counter()
    with Session(config) as session, contextlib.ExitStack() as owned:  # closed before the index
        if not quotes_only:
            if generator is None:
                generator = owned.enter_context(contextlib.closing(make_generator(config)))
            generator.preload()
        if searcher is None:
            searcher = Searcher(config, session.open_reader())
        if generator is not None:
            generator.wait_loaded()
        query = retrieval_query or question
        hits = _search_parts(searcher, query, config)
        retrieve_s = time.perf_counter() - started
        return answer_from_hits(config, question, hits, generator, searcher, on_token=on_token,
                                on_quotes=on_quotes, context=context, started=started,
                                retrieve_s=retrieve_s, retrieval_query=query, quotes_only=quotes_only)


def answer_from_hits(config: Config, question: str, hits: Sequence[Hit], generator: Generator | None,
                     searcher, *, on_token: OnToken | None = None, on_quotes: OnQuotes | None = None,
                     context: str = "", started: float | None = None, retrieve_s: float = 0.0,
                     retrieval_query: str = "", quotes_only: bool = False) -> Answer:
    """Everything after retrieval: the gate, the evidence, generation, the checks."""
    started = time.perf_counter() if started is None else started
    model = generator.model_name if generator is not None else ""
    timings: dict[str, float | None] = {"retrieve_s": retrieve_s, "quotes_s": None,
                                        "first_token_s": None, "total_s": None}
    query = retrieval_query or question
    # a chat follow-up: its standalone form; "what did I write about X?" asks about X
    typed = query if retrieval_query else question
    asked = without_notes_frame(typed)
    # The hits' words and cosine alone refuse only what the evidence gate would refuse too (a best
    # hit under STRONG_HIT): between it and relevance's cosine, the question's own words, not the
    # notes', are often what is missing, and the quotes are judged (``covers``)
    if not relevant(query, hits, config.min_score) and (config.min_score >= 0 or _top_cosine(hits) < STRONG_HIT):
        timings["total_s"] = time.perf_counter() - started
        return Answer(question, NOT_COVERED, [], model, timings, covered=False, retrieval_query=query,
                      not_mentioned=unheard_in(asked, searcher), nearest=_nearest(hits))
    parts = question_parts(asked)
    idf = _idf(searcher)
    index = searcher.index
    # each chunk as its note has it (``retrieve.tails``); every rule reads a section with one query
    sections = sections_as_read(index)
    hits = untailed_hits(hits, sections)
    read = with_matching_sections(asked, with_sections(hits, sections), index.note_headings, sections,
                                  searcher.embed_passages)
    hits_and_rows = with_page_rows(read, index.page_chunks)
    if asks_reason(asked):  # the cause is often said just after the chunk that names what changed
        hits_and_rows = with_following(hits_and_rows, index.page_chunks)
    evidence = select_evidence(without_likened(asked), hits_and_rows, embed=searcher.embed_passages, idf=idf,
                               parts=parts, part_floor=PART_FLOOR,
                               focus=without_notes_frame(question) if retrieval_query and retrieval_query != question
                               else "")
    evidence = evidence_at_source(evidence, index)  # a quote from an embedded note, at its own lines
    quotes = complete_lead_ins(quote_the_row(asked, evidence.quotes, hits_and_rows, idf), sections, asked)
    quotes = with_whole_procedure(quotes, asked, sections)
    quotes = with_answer_after(with_sentence_after(with_rule_before(quotes, sections), asked, sections), sections)
    quotes = with_addition_after(quotes, sections)
    quotes = with_callout_titles(with_row_headers(with_line_above(quotes, sections), sections), sections)
    quotes = with_caveat(quotes, asked, sections, idf)
    timings["quotes_s"] = time.perf_counter() - started
    best = max((q.score for q in quotes), default=0.0)
    named = names_in(asked)
    # read with the file's name too ("FY2022" is the report's); most questions name nothing
    unfound = names_not_in(named, [f"{h.chunk.path}\n{hit_text(h)}" for h in hits_and_rows]
                           + [evidence_text(q) for q in quotes]) if named else []
    unknown = unknown_names(asked, searcher.index.keyword_df) if best < EVIDENCE_FLOOR or unfound else []
    unheard = unheard_in(asked, searcher, quotes)
    said = said_in_other_words(unheard, quotes, hits, searcher) if best < EVIDENCE_FLOOR else []
    # A thing the question names that no passage read names is not what they answer, however close
    # they come: "move my vault over to Logseq" reads the notes on moving vaults (0.55); Logseq is
    # only in the importers' list, which is not among them.
    # nor is a word of a statement typed before the question ("oops, I committed too early. how do
    # I take that commit back?"): it sets the scene, the question asks
    scene = context_words(asked)
    # a name told there ("I want a GitHub Actions job to push my site updates ... which command and flag
    # do I use?") is named and hedged, not refused
    told = [n for n in dict.fromkeys(unfound + unknown) if of_scene(n, scene)]
    # An everyday word no note uses ("get my money back", "the tiny icon in the browser tab") is
    # more often the asker's phrasing than a subject the notes lack ("flashcards", "descale"):
    # named and hedged, not refused, unless it is the thing asked for ("which hotel ...")
    phrasing = {w for w in unheard if is_common_word(w)} - {asked_thing(asked)}
    refused = [n for n in unfound if n not in told] or not covers(
        best, _close(asked, hits), asked, quotes,
        [n for n in unknown if n not in told] + [w for w in unheard if w not in said and w not in scene
                                                 and w not in phrasing])
    missing = [] if refused else evidence.missing + [
        p for p in evidence.parts if p not in evidence.missing
        and (asks_what_no_note_says(p, quotes, searcher) or asks_a_quality_no_passage_says(p, hits_and_rows, searcher))]
    missing = [p for p in with_parts_that_follow(evidence.parts, missing, unheard) if not asks_nothing(p)]  # "when ..."
    asking = [p for p in parts if not asks_nothing(p)]
    # every part that asks said missing: "I grow tomatoes on the balcony, how much fertiliser should
    # they get?" asks one thing; the watering schedule quoted beside "Your notes don't say" answers nothing
    if refused or asking and all(p in missing for p in asking):
        timings["total_s"] = time.perf_counter() - started
        return Answer(question, NOT_COVERED, [], model, timings, covered=False, retrieval_query=query,
                      not_mentioned=unknown + unheard, not_found=[n for n in unfound if n not in unknown],
                      nearest=_nearest(hits))
    # A word no note uses ("read my notes out loud") makes a plain answer "may answer it", even one
    # of the scene, which does not refuse ("I keep my tasks in todoist. how do I connect them to my
    # daily note?"); a question's parts were each judged on their own words (``missing``): no hedge
    # on top. What the asker tells first ("I bought a new espresso machine, how long should it
    # warm up ...?") asks nothing, and is no part that lets a word of the other pass unhedged.
    shape = {"missing_parts": missing, "parts": parts if len(parts) > 1 else [],
             "tentative": best < EVIDENCE_FLOOR or bool(told) or bool(unheard) and len(asking) < 2
                           and (best < UNHEARD_FLOOR or not scene.isdisjoint(unheard)),
             "not_mentioned": unknown + unheard}
    quotes = without_padding_best(without_quotes_of_missing_parts(quotes, evidence, missing), evidence,
                                  shape["tentative"])
    quotes = of_the_years_asked(quotes, asked)  # after the gate has read them all
    quotes = with_section_leads(quotes, asked, sections)
    # "These passages may answer it": no model sentence then. Joining two quotes that may not
    # answer made "Install the headless client, and you can use it to record your own audio"
    # of an install step and the audio recorder, each word in a quote, the claim in neither.
    # Nor for a word no note uses: "The valve I chose for the garden is the 16 mm drip line".
    if quotes_only or generator is None or shape["tentative"] or unheard:
        gate = SentenceGate(_checker(asked, quotes), on_token)
        _lead_with_figure(gate, asked, quotes, idf)  # the direct answer, before the quotes
        if on_quotes is not None:
            on_quotes(quotes)
        timings["total_s"] = time.perf_counter() - started
        return Answer(question, gate.finish(), [_source(q) for q in quotes], model, timings, quotes=quotes,
                      cited=[q.n for q in quotes], retrieval_query=query, checked=False,
                      dropped=[v.to_json() for v in gate.dropped], **shape)
    prompt = fit_quotes(generator, typed, quotes, max_tokens=config.max_tokens, context=context)
    quotes = prompt.quotes  # those that fit the window, renumbered 1..n
    first: list[float] = []

    def show(text: str) -> None:
        if not first:
            first.append(time.perf_counter() - started)
        if on_token is not None:
            on_token(text)

    gate = SentenceGate(_checker(asked, quotes), show)
    # The direct answer a quoted row gives goes before the quotes; the model's sentences,
    # seconds later, after them (the quotes are not held back for the model)
    _lead_with_figure(gate, asked, quotes, idf)
    if on_quotes is not None:
        on_quotes(quotes)

    def feed(piece: str) -> None:
        gate.feed(piece)
        if gate.enough:
            raise Enough  # the rest would be cut or dropped: do not make the user wait for it

    generating = time.perf_counter() - started
    gen = generator.generate(prompt.messages, max_tokens=prompt.max_tokens,
                             temperature=config.temperature, on_token=feed)
    text = gate.finish()
    fallback = not text.strip()  # the model added nothing the quotes do not say: they are the answer
    cited = sorted({n for v in gate.verdicts if v.ok for n in v.cited}) if not fallback else [q.n for q in quotes]
    timings["first_token_s"] = first[0] if first else None  # the first sentence shown
    # The model's own first token, shown or not: the GPU's share of the wait (issue 21).
    timings["model_first_token_s"] = generating + gen.first_token_s if gen.first_token_s is not None else None
    timings["total_s"] = time.perf_counter() - started
    return Answer(question, text.strip(), [_source(q) for q in quotes], model, timings,
                  prompt_tokens=gen.prompt_tokens, completion_tokens=gen.completion_tokens,
                  cited=cited, retrieval_query=query, quotes=quotes,
                  dropped=[v.to_json() for v in gate.dropped], generated=gen.text,
                  quoted_fallback=fallback, notices=list(generator.notices), stopped=gate.enough, **shape)


def without_quotes_of_missing_parts(quotes: list[Quote], evidence: Evidence, missing: Sequence[str]) -> list[Quote]:
    """The quotes less those chosen for a part found missing after all ("can it transcribe my
    voice memos": the Audio recorder paragraph was its best unit, and the answer says the notes
    don't say it): beside "Your notes don't say", the quote is ~40 words that answer nothing.
    A quote that is also another part's stays, and so does the best quote (the "not covered"
    gate has read its score). The rest are renumbered 1..n."""
    gone = {place for part, place in zip(evidence.parts, evidence.part_places) if part in missing and place}
    gone -= {place for part, place in zip(evidence.parts, evidence.part_places) if part not in missing}
    if not gone or not quotes:
        return quotes
    best = max(quotes, key=lambda q: q.score)
    kept = [q for q in quotes if q is best or quote_place(q) not in gone]
    return quotes if len(kept) == len(quotes) else [replace(q, n=n) for n, q in enumerate(kept, 1)]


def without_padding_best(quotes: list[Quote], evidence: Evidence, tentative: bool) -> list[Quote]:
    """The quotes less the best scored one when it only pads the others (``padding.best_pads``):
    the gate has read its score and words, and beside the step it says nothing the reader needs.
    On weak evidence ("these passages may answer it") it stays when no other quote is of its
    note: the best passage's note is then the likeliest to be the one meant, and the steps of
    other notes may not be ("see every page that points to the one I'm writing": Backlinks'
    description, beside Page preview's step)."""
    kept = [q for q in quotes if quote_place(q) != evidence.padding_place]
    if evidence.padding_place is None or not kept or len(kept) == len(quotes):
        return quotes
    if tentative and evidence.padding_place[0] not in {q.path for q in kept}:
        return quotes
    return [replace(q, n=n) for n, q in enumerate(kept, 1)]


def _checker(asked: str, quotes: Sequence[Quote], lifted: bool = False) -> Callable[[str], Verdict]:
    """The test each sentence of an answer passes before it is shown. ``lifted``: a figure
    lifted out of a table row, which adds to the quotes by what it is; only its facts and
    words are checked."""
    texts = {q.n: evidence_text(q) for q in quotes}

    def check(sentence: str) -> Verdict:
        verdict = check_sentence(sentence, texts, asked, _attributor(quotes))
        return adds_to_quotes(verdict, asked, texts) if verdict.ok and not lifted else verdict
    return check


def _lead_with_figure(gate: SentenceGate, asked: str, quotes: Sequence[Quote], idf) -> None:
    """The figure asked for, said first when a quoted table row clearly gives it, or else a
    report's sentence the count or total asked for (``direct_count``)."""
    figure = direct_figure(asked, quotes, idf) or direct_count(asked, quotes)
    if figure is not None:
        gate.lead(figure.sentence(), _checker(asked, quotes, lifted=True))


def _close(question: str, hits: Sequence[Hit]) -> bool:
    """Is the best hit close to the question: in meaning (its cosine), or holding every word asked?
    "which of my notes mention the Comandante?" is 0.2 from the Grinders note, a name the embedding
    model does not know."""
    return _top_cosine(hits) >= STRONG_HIT or holds_every_word(question, hits)


def covers(best: float, close: bool, question: str, quotes: Sequence[Quote], unknown: Sequence[str]) -> bool:
    """Do the quotes answer the question? Yes over the evidence floor. Under it, they may (and
    are shown as "may answer it") when the best hit is ``close`` (``_close``) and the quote not far
    off, or a quote holds every word asked but everyday ones ("what does WDT mean"), unless the
    question names something, or uses a word, that no note holds ("read my notes out loud"), or asks
    for a figure or a time and no quote holds one: weak evidence that lacks what was asked is no answer."""
    if best >= EVIDENCE_FLOOR:
        return True
    if unknown or (best < TENTATIVE_FLOOR or not close) and not every_word_held(question, map(evidence_text, quotes)):
        return False
    return not (asks_figure(question) and not any(holds_figure(q.text, question) for q in quotes))


def _search_parts(searcher, query: str, config: Config) -> list[Hit]:
    """The question's hits, and for a question of several parts each part's best hits too: the
    note on the second part ("how long should the shot take") is often not among the first's."""
    hits = searcher.search(query, config.top_k, config.mode)
    parts = question_parts(query)
    if len(parts) < 2:
        return hits
    seen = {h.chunk.id for h in hits}
    for part in parts:
        for hit in searcher.search(part, PART_HITS, config.mode):
            if hit.chunk.id not in seen:
                seen.add(hit.chunk.id)
                hits.append(hit)
    return hits


NEAREST = 3  # notes named under a refusal


def _nearest(hits: Sequence[Hit]) -> list[str]:
    """The notes of the best hits, best first: a question the gate refuses in words the notes
    do not use may still be answered in one of them, and the reader can open it."""
    return list(dict.fromkeys(h.chunk.path for h in sorted(hits, key=lambda h: h.rank)))[:NEAREST]


def _top_cosine(hits: Sequence[Hit]) -> float:
    return max((h.vector_score for h in hits if h.vector_score is not None), default=0.0)


def _source(q: Quote) -> Source:
    return Source(q.n, q.path, q.title, q.heading, q.line_start, q.line_end, q.page, q.score)


def _attributor(quotes: Sequence[Quote]):
    """For a sentence that cites nothing: the quote whose words it shares most (if any)."""
    def attribute(text: str) -> list[int]:
        words = query_terms(text)
        if not words:
            return []
        best, best_n = 0.0, None
        for q in quotes:
            share = len(words & query_terms(evidence_text(q))) / len(words)
            if share > best:
                best, best_n = share, q.n
        return [best_n] if best_n is not None and best >= 0.3 else []
    return attribute


def _idf(searcher):
    """idf of stemmed content words in this index (FTS5's own figures)."""
    def idf(terms: list[str]) -> dict[str, float]:
        values = searcher.index.keyword_idf([f'"{t}"' for t in terms])
        return dict(zip(terms, values))
    return idf
