"""answer(): retrieve, decide whether the notes cover the question, prompt, generate, check citations.

A stage function: it never prints. Tokens and status reach the caller through callbacks;
the result is an ``Answer`` that ``render``/the commands turn into text or JSON.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .config import Config
from .generate import Generator, OnToken
from .prompt import fit_prompt, query_terms
from .types import Hit

NOT_COVERED = "Your notes don't seem to cover this."

# Relevance gate, calibrated on the Obsidian help vault (bench/bench_ask.py --calibrate):
# the best hit's cosine (all-MiniLM-L6-v2) and how many of the question's content words
# the best hits contain. See relevant() for the rule.
MIN_COSINE = 0.45  # at or above: relevant, whatever the words say
LOW_COSINE = 0.30  # below: not relevant, whatever the words say
MIN_TERM_COVERAGE = 0.5  # in between: relevant when half the question's words are in the hits



@dataclass
class Source:
    """A numbered source as listed after the answer and in the JSON contract."""

    n: int
    path: str
    title: str
    heading: str
    line_start: int
    line_end: int
    page: int | None
    score: float

    @classmethod
    def from_hit(cls, n: int, hit: Hit) -> Source:
        c = hit.chunk
        return cls(n, c.path, c.title, c.heading, c.line_start, c.line_end, c.page, hit.score)

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "path": self.path, "title": self.title, "heading": self.heading,
                "line_start": self.line_start, "line_end": self.line_end, "page": self.page}


@dataclass
class Answer:
    question: str
    text: str
    sources: list[Source]  # empty when the notes do not cover the question
    model: str
    timings: dict[str, float | None]  # retrieve_s, first_token_s, total_s (from the call)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    covered: bool = True
    cited: list[int] = field(default_factory=list)  # source numbers the answer cites
    removed_citations: list[str] = field(default_factory=list)  # e.g. ["[7]"]: no such source
    attributed: bool = False  # the model cited nothing; citations added by word overlap
    retrieval_query: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.text,
                "sources": [s.to_json() for s in self.sources], "model": self.model,
                "timings": {k: (round(v, 3) if isinstance(v, float) else v)
                            for k, v in self.timings.items()},
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cited": self.cited, "removed_citations": self.removed_citations,
                "citations_attributed": self.attributed}


# ---------------------------------------------------------------------------------------
# Relevance


def term_coverage(question: str, hits: Sequence[Hit], top: int = 3) -> float:
    """Share of the question's content words found in the best hits (title, heading, text)."""
    terms = query_terms(question)
    if not terms:
        return 0.0
    seen: set[str] = set()
    for h in sorted(hits, key=lambda h: h.rank)[:top]:
        c = h.chunk
        seen |= query_terms(f"{c.title} {c.heading} {c.text}")
    return len(terms & seen) / len(terms)


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
    if best >= MIN_COSINE:
        return True
    return best >= LOW_COSINE and coverage >= MIN_TERM_COVERAGE


# ---------------------------------------------------------------------------------------
# Citations

_CITATION = re.compile(r"\[(\d{1,3})\]")


class CitationFilter:
    """Wraps a token callback: holds back `[...]` until it closes, then passes on only
    citations of real sources, so what streams equals the checked answer."""

    def __init__(self, n_sources: int, on_token: OnToken | None):
        self.n_sources, self.on_token = n_sources, on_token
        self.pending = ""
        self.parts: list[str] = []
        self.removed: list[str] = []

    def _emit(self, text: str) -> None:
        if text:
            self.parts.append(text)
            if self.on_token is not None:
                self.on_token(text)

    def feed(self, piece: str) -> None:
        self.pending += piece
        while self.pending:
            i = self.pending.find("[")
            if i < 0:
                self._emit(self.pending)
                self.pending = ""
                return
            self._emit(self.pending[:i])
            self.pending = self.pending[i:]
            m = re.match(r"\[(\d{0,3})(\]?)", self.pending)
            if m and not m.group(2) and m.end() == len(self.pending):
                return  # an unfinished "[12": wait for more
            if m and m.group(2) and m.group(1):
                n = int(m.group(1))
                if 1 <= n <= self.n_sources:
                    self._emit(m.group(0))
                else:
                    self.removed.append(m.group(0))
                self.pending = self.pending[m.end():]
            else:  # a bracket that is not a citation
                self._emit("[")
                self.pending = self.pending[1:]

    def finish(self) -> str:
        self._emit(self.pending)
        self.pending = ""
        text = "".join(self.parts)
        return re.sub(r"[ \t]+([.,;:])", r"\1", text) if self.removed else text


def check_citations(text: str, n_sources: int) -> tuple[str, list[int], list[str]]:
    """Remove citations of sources that do not exist; return (text, cited, removed)."""
    f = CitationFilter(n_sources, None)
    f.feed(text)
    clean = f.finish()
    cited = sorted({int(n) for n in _CITATION.findall(clean)})
    return clean, cited, f.removed


def attribute(text: str, texts: Sequence[str], min_share: float = 0.2) -> list[int]:
    """Sources (1-based) whose words the answer uses most, for an answer that cites none."""
    words = query_terms(text)
    if not words:
        return []
    overlaps = [len(words & query_terms(t)) / len(words) for t in texts]
    if not overlaps or max(overlaps) < min_share:
        return []
    top = max(overlaps)
    return [i + 1 for i, o in enumerate(overlaps) if o >= max(min_share, 0.75 * top)][:2]


# ---------------------------------------------------------------------------------------
# The stage


def answer_from_hits(config: Config, question: str, hits: Sequence[Hit], generator: Generator, *,
                     on_token: OnToken | None = None, context: str = "",
                     started: float | None = None, retrieve_s: float = 0.0,
                     retrieval_query: str = "") -> Answer:
    """Everything after retrieval: the relevance gate, the prompt, generation, citations."""
    started = time.perf_counter() if started is None else started
    timings: dict[str, float | None] = {"retrieve_s": retrieve_s, "first_token_s": None,
                                        "total_s": None}
    if not relevant(retrieval_query or question, hits, config.min_score):
        timings["total_s"] = time.perf_counter() - started
        return Answer(question, NOT_COVERED, [], generator.model_name, timings, covered=False,
                      retrieval_query=retrieval_query or question)
    prompt = fit_prompt(generator, question, hits, max_tokens=config.max_tokens, context=context)
    first: list[float] = []

    def tick(piece: str) -> None:
        if not first:
            first.append(time.perf_counter() - started)
        if on_token is not None:
            on_token(piece)

    filt = CitationFilter(len(prompt.hits), tick)
    gen = generator.generate(prompt.messages, max_tokens=prompt.max_tokens,
                             temperature=config.temperature, on_token=filt.feed)
    text = filt.finish()
    cited = sorted({int(n) for n in _CITATION.findall(text)})
    attributed = False
    if not cited and text.strip():
        cited = attribute(text, [h.chunk.text for h in prompt.hits])
        if cited:
            suffix = " " + "".join(f"[{n}]" for n in cited)
            text = text.rstrip() + suffix
            attributed = True
            tick(suffix)
    sources = [Source.from_hit(i + 1, h) for i, h in enumerate(prompt.hits)]
    timings["first_token_s"] = first[0] if first else None
    timings["total_s"] = time.perf_counter() - started
    return Answer(question, text.strip(), sources, generator.model_name, timings,
                  prompt_tokens=gen.prompt_tokens, completion_tokens=gen.completion_tokens,
                  cited=cited, removed_citations=filt.removed, attributed=attributed,
                  retrieval_query=retrieval_query or question)


def answer(config: Config, question: str, *, generator: Generator | None = None,
           on_token: OnToken | None = None, retrieval_query: str | None = None,
           context: str = "", searcher: Any = None) -> Answer:
    """Answer a question from the index. The caller may pass (and then owns) a generator and
    a ``retrieve.Searcher`` to reuse across questions, as a chat does.

    ``retrieval_query`` is what is searched (a follow-up combined with what came before);
    ``context`` is an earlier question shown to the model.

    The model loads in a thread while the index opens (chromadb's import alone is ~0.8 s).
    It must finish before the embedder loads: llama-cpp-python silences a load by pointing
    file descriptors 1 and 2 at /dev/null and back, and two loads at once can leave stdout
    pointing at /dev/null for good.
    """
    started = time.perf_counter()
    own_generator, own_searcher = generator is None, searcher is None
    if generator is None:
        from .generate import make_generator

        generator = make_generator(config)
    try:
        start_loading = getattr(generator, "start_loading", None)
        if start_loading is not None:
            start_loading()
        if searcher is None:
            from .retrieve import Searcher

            searcher = Searcher(config)
        wait_loaded = getattr(generator, "wait_loaded", None)
        if wait_loaded is not None:
            wait_loaded()
        query = retrieval_query or question
        hits = searcher.search(query, config.top_k, config.mode)
        retrieve_s = time.perf_counter() - started
        return answer_from_hits(config, question, hits, generator, on_token=on_token,
                                context=context, started=started, retrieve_s=retrieve_s,
                                retrieval_query=query)
    finally:
        if own_searcher and searcher is not None:
            searcher.close()
        if own_generator:
            generator.close()
