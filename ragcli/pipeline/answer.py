"""answer(): retrieve, decide whether the notes cover the question, prompt, generate, check citations.

A stage function: it never prints. Tokens and status reach the caller through callbacks;
the result is an ``Answer`` that ``render``/the commands turn into text or JSON.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..config import Config
from ..generate import Generator, OnToken
from ..generate.citations import CITATION, CitationFilter, attribute
from ..generate.prompt import fit_prompt
from ..retrieve.relevance import relevant
from ..types import Answer, Hit, Source
from .session import Session

NOT_COVERED = "Your notes don't seem to cover this."

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
    cited = sorted({int(n) for n in CITATION.findall(text)})
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
    from ..retrieve import Searcher

    started = time.perf_counter()
    with Session(config) as session:
        if generator is not None:
            session.use_generator(generator)
        generator = session.generator
        generator.preload()
        if searcher is None:
            searcher = Searcher(config, session.open_reader())
        generator.wait_loaded()
        query = retrieval_query or question
        hits = searcher.search(query, config.top_k, config.mode)
        retrieve_s = time.perf_counter() - started
        return answer_from_hits(config, question, hits, generator, on_token=on_token,
                                context=context, started=started, retrieve_s=retrieve_s,
                                retrieval_query=query)
