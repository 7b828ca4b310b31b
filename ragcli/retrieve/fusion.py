"""Fusing the vector and keyword rankings, and turning user text into a keyword query.

``fuse_convex`` is what hybrid search ships: a convex combination of the two scores, each
normalised (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", 2023:
convex combination beats RRF and needs one parameter). ``fuse_rrf`` (plain reciprocal rank
fusion) stays for comparison (``bench/bench_eval.py``).
"""

from __future__ import annotations

import re

RRF_K = 60
ALPHA = 0.5  # weight of the vector side in the convex fusion; 1 - ALPHA for keywords

_WORD = re.compile(r"\w+", re.UNICODE)

# Function words dropped from keyword queries: bm25 gives them almost no weight anyway,
# but as OR terms they match nearly every chunk and make FTS5 score all of them.
STOPWORDS = frozenset("""
a an and are as at be been being but by can could did do does for from had has have how
i if in into is it its me my no not of on or our so such than that the their them then
there these they this those to was we were what when where which who whom why will with
would you your
""".split())



def fuse_rrf(vec: list[tuple[str, float]], kw: list[tuple[str, float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of two ranked lists (the classic baseline)."""
    scores: dict[str, float] = {}
    for ranked in (vec, kw):
        for rank, (cid, _s) in enumerate(ranked, 1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))



def _minmax(scores: dict[str, float]) -> dict[str, float]:
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = high - low
    if span <= 0:
        return {c: (1.0 if high > 0 else 0.0) for c in scores}
    return {c: (s - low) / span for c, s in scores.items()}


def fuse_convex(vec: dict[str, float], kw: dict[str, float], alpha: float = ALPHA,
                keyword_scale: float | None = None) -> list[tuple[str, float]]:
    """alpha * normalised cosine + (1 - alpha) * normalised bm25, over the union of candidates.

    Cosines are min-max normalised over the pool; bm25 too, or divided by ``keyword_scale``
    (the bm25 of an average chunk holding every query term once) when given, so a chunk matching one common word of a
    long query is not stretched to 1. A candidate missing from one side scores 0 there.
    """
    v = _minmax(vec)
    if keyword_scale:
        b = {c: min(max(s, 0.0) / keyword_scale, 1.0) for c, s in kw.items()}
    else:
        b = _minmax(kw)
    scores = {c: alpha * v.get(c, 0.0) + (1.0 - alpha) * b.get(c, 0.0) for c in set(v) | set(b)}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def fts_query(text: str) -> str:
    """Words OR-ed as quoted FTS5 strings: user text can never be FTS5 syntax.

    Stopwords are dropped unless the query is nothing but stopwords ("to be or not to be").
    """
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1 or w.isdigit()]
    content = [w for w in words if w not in STOPWORDS]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(content or words))
