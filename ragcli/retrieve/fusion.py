"""Fusing the vector and keyword rankings, and turning user text into a keyword query.

``fuse_convex`` is what hybrid search ships: a convex combination of the two scores, each
normalised (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", 2023:
convex combination beats RRF and needs one parameter). Reciprocal rank fusion and the other
variants it was compared with live in ``bench/fusion_variants.py``.
"""

from __future__ import annotations

import re

ALPHA = 0.5  # weight of the vector side in the convex fusion; 1 - ALPHA for keywords
# Both tuned on the dev halves only (bench/bench_paraphrase.py odd ids, SciFact's first 100
# queries), where a broad plateau (note weight 0.3-0.5, full-keyword coverage 0.5) neither
# lost on SciFact nor gained less on the paraphrases.
NOTE_WEIGHT = 0.5  # the note's centroid cosine added to a chunk's cosine (Searcher._with_notes)
FULL_KEYWORD_COVER = 0.5  # keywords weigh fully once their best match covers this much of the query

_WORD = re.compile(r"\w+", re.UNICODE)

# Function words dropped from keyword queries: bm25 gives them almost no weight anyway,
# but as OR terms they match nearly every chunk and make FTS5 score all of them.
STOPWORDS = frozenset("""
a an and are as at be been being but by can could did do does for from had has have how
i if in into is it its me my no not of on or our so such than that the their them then
there these they this those to was we were what when where which who whom why will with
would you your
""".split())


def _minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    if span <= 0:
        return {c: (1.0 if high > 0 else 0.0) for c in scores}
    return {c: (s - low) / span for c, s in scores.items()}


def fuse_convex(vec: dict[str, float], kw: dict[str, float], alpha: float = ALPHA,
                keyword_scale: float | None = None, full_cover: float = 0.0,
                unvectored: frozenset[str] = frozenset(),
                on_pages: frozenset[str] = frozenset()) -> list[tuple[str, float]]:
    """alpha * normalised cosine + (1 - alpha) * normalised bm25, over the union of candidates.

    Cosines are min-max normalised over the pool. bm25 is min-max
    normalised too, or divided by ``keyword_scale`` (the bm25 of an average chunk holding
    every query term once) when given, so a chunk matching one common word of a long query
    is not stretched to 1. ``full_cover`` (> 0) weighs the keyword side by how much of the
    query its best match covers (that normalised bm25, 0..1): full weight from ``full_cover``
    up, less below it in proportion. A question worded like the notes keeps the keyword
    weight; one worded otherwise (its best match shares a word or two by chance) leans on
    the vectors. A candidate missing from one side scores 0 there, except one in
    ``unvectored`` (a chunk not embedded yet, which no vector search can find): its vector
    side takes its bm25 min-max normalised over the pool, the scaling the cosines get, so it
    ranks by its keywords alone on the scale of the chunks that have both, instead of losing
    the vector side's weight (bench/bench_pending.py: hit@5 with 10% of the vectors in 0.607,
    keyword search alone 0.612; scoring them 0 on the vector side gave 0.388; the keyword
    score itself, which rarely reaches 1 where the best cosine always does, 0.536).

    ``on_pages``: the candidates on a PDF page. Their bm25 is divided by the best of theirs
    where that passes ``keyword_scale``, instead of being cut at 1 (``_page_keywords``).
    """
    v = _minmax(vec)
    if keyword_scale:
        b = {c: min(max(s, 0.0) / keyword_scale, 1.0) for c, s in kw.items()}
        b.update(_page_keywords(kw, keyword_scale, on_pages))
    else:
        b = _minmax(kw)
    beta = 1.0 - alpha
    if full_cover > 0:
        beta *= min(max(b.values(), default=0.0) / full_cover, 1.0)
    if unvectored:
        # on the vector side's own scale: min-max over the pool, as the cosines are
        ranks = _minmax(kw)
        for c in unvectored:
            v[c] = ranks.get(c, 0.0)
    scores = {c: (1.0 - beta) * v.get(c, 0.0) + beta * b.get(c, 0.0) for c in set(v) | set(b)}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def fts_query(text: str) -> str:
    """Words OR-ed as quoted FTS5 strings: user text can never be FTS5 syntax.

    Stopwords are dropped unless the query is nothing but stopwords ("to be or not to be").
    """
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in STOPWORDS]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(content or words))


def _page_keywords(kw: dict[str, float], keyword_scale: float, on_pages: frozenset[str]) -> dict[str, float]:
    """The keyword side of the candidates on PDF pages: bm25 over the larger of
    ``keyword_scale`` and their best bm25, so their order survives past "every query term once".

    Every chunk of a PDF carries the report's title, and its heading what the report is about
    (organisation, period), so a question that names its report matches those words on every
    page of it: most of a report's best candidates passed the scale, were all cut to 1, and
    only their cosines ordered them. A note's chunks keep the cut: the Markdown sets lose a
    question when theirs is lifted (bench/ISSUE20.md). The best page scores 1 at most, as the
    best note does. Taken out once (rp-12's figures fell out of `rag ask` when its page went to
    second place), back since the evidence quotes the sentence that gives the figure; figures
    in bench/ISSUE20.md, session 6."""
    scores = {c: max(kw[c], 0.0) for c in on_pages if c in kw}
    top = max(keyword_scale, max(scores.values(), default=0.0))
    return {c: s / top for c, s in scores.items()}
