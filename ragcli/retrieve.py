"""Search the index: vector (Chroma), keyword (SQLite FTS5), or both fused.

Filters are resolved to the set of matching files first and applied inside both
searches, so a filter never empties a result that a top-k cut made before it.

Hybrid search, in three steps:
1. candidates: the top ``n`` chunks by cosine (Chroma) and the top ``n`` by bm25 (FTS5);
2. completion: every candidate gets *both* scores. A chunk only the keyword side found
   gets its exact cosine (from the manifest's vector cache), one only the vector side
   found gets its exact bm25 (0 when it matches no query term). Fusion then compares
   like with like instead of treating "not in the other top n" as "irrelevant";
3. fusion: a convex combination of the two scores, each min-max normalised over the
   candidate pool of this query (Bruch et al., "An Analysis of Fusion Functions for
   Hybrid Retrieval", 2023: convex combination beats RRF and needs one parameter).

``fuse_rrf`` (plain reciprocal rank fusion) stays for comparison (``bench/bench_eval.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .config import Config
from .errors import UsageError
from .store import Index
from .types import Hit

MODES = ("hybrid", "vector", "keyword")
RRF_K = 60
CANDIDATES = 50  # per side, before fusion
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


@dataclass(frozen=True)
class Filters:
    path: str | None = None  # glob on the absolute path ("*/Projects/*"), or a suffix
    tag: str | None = None
    since: str | None = None  # ISO date, inclusive
    until: str | None = None

    def active(self) -> bool:
        return any((self.path, self.tag, self.since, self.until))


@dataclass(frozen=True)
class Fusion:
    """How hybrid mode combines its two sides (the default is what ``rag`` ships)."""

    method: str = "convex"  # "convex" (normalised scores) or "rrf" (ranks)
    alpha: float = ALPHA
    complete: bool = True  # give every candidate both scores before fusing
    # "minmax" over the pool, or "ideal": bm25 / the bm25 of a chunk of average length that
    # holds every query term once (= the sum of the terms' idf, as FTS5's bm25 has k1 = 1.2)
    keyword_scale: str = "ideal"


class Searcher:
    """Holds the index and the embedder between queries (chat, eval, the watcher's readers)."""

    def __init__(self, config: Config, index: Index | None = None, embedder=None,
                 fusion: Fusion | None = None):
        self.config = config
        self.index = index or Index.open_reader(config)
        self._embedder = embedder
        self.fusion = fusion or Fusion()

    def close(self) -> None:
        self.index.close()

    @property
    def embedder(self):
        if self._embedder is None:
            from .embed import make_embedder
            from .pipeline import index_fingerprint

            embedder = make_embedder(self.config)
            have = self.index.fingerprint()
            if have is not None:
                want = index_fingerprint(self.config, embedder)
                if have.get("embedding_model") != want["embedding_model"] or have.get("dim") != want["dim"]:
                    from .errors import IndexMismatchError
                    from .store import describe_mismatch

                    raise IndexMismatchError(describe_mismatch(have, want))
            self._embedder = embedder
        return self._embedder

    def search(self, query: str, k: int = 10, mode: str | None = None,
               filters: Filters | None = None, candidates: int | None = None) -> list[Hit]:
        """The top ``k`` chunks; ``candidates`` per side before fusion (default max(50, k))."""
        mode = mode or self.config.mode
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", hint=f"Use one of: {', '.join(MODES)}")
        query = query.strip()
        if not query or k <= 0:
            return []
        n = max(candidates or CANDIDATES, k)
        paths = self._allowed_paths(filters)
        if paths is not None and not paths:
            return []
        qvec = self.embedder.embed([query])[0] if mode != "keyword" else None
        match = fts_query(query)
        vec = self.index.vectors.query(qvec, n, paths) if qvec is not None else []
        kw = self.index.manifest.keyword_search(match, n, paths) if mode != "vector" and match else []
        vec_scores, kw_scores = dict(vec), dict(kw)
        if mode == "hybrid":
            if self.fusion.complete:
                vec_scores.update(self.cosines(qvec, [c for c in kw_scores if c not in vec_scores]))
                missing = [c for c in vec_scores if c not in kw_scores]
                found = dict(self.index.manifest.keyword_search(match, len(missing), None, ids=missing)) if match and missing else {}
                kw_scores.update({c: found.get(c, 0.0) for c in missing})
            if self.fusion.method == "rrf":
                ranked = fuse_rrf(vec, kw)
            else:
                scale = None
                if self.fusion.keyword_scale == "ideal" and match:
                    scale = sum(self.index.manifest.keyword_idf(match.split(" OR ")))
                ranked = fuse_convex(vec_scores, kw_scores, self.fusion.alpha, scale)
        else:
            ranked = vec or kw
        return self._hits(ranked[:k], vec_scores, kw_scores)

    def cosines(self, qvec: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
        """Exact cosine of the query with chunks, from the manifest's vector cache."""
        if not ids:
            return {}
        keys = {cid: key for cid, _path, key in self.index.manifest.stored_chunks(list(ids))}
        dim = int((self.index.fingerprint() or {}).get("dim", 0)) or int(qvec.shape[0])
        vectors = self.index.manifest.cached_vectors(list(set(keys.values())), dim)
        q = np.asarray(qvec, dtype=np.float32)
        return {cid: float(vectors[key] @ q) for cid, key in keys.items() if key in vectors}

    def _allowed_paths(self, filters: Filters | None) -> list[str] | None:
        if not filters or not filters.active():
            return None
        return self.index.manifest.filter_paths(filters.path, filters.tag, filters.since, filters.until)

    def _hits(self, ranked: list[tuple[str, float]], vec: dict, kw: dict) -> list[Hit]:
        chunks = self.index.manifest.chunks_by_ids([cid for cid, _ in ranked])
        hits = []
        for cid, score in ranked:
            if cid in chunks:  # a chunk Chroma still knows but the manifest dropped is skipped
                hits.append(Hit(chunks[cid], float(score), len(hits) + 1, vec.get(cid), kw.get(cid)))
        return hits


def fuse_rrf(vec: list[tuple[str, float]], kw: list[tuple[str, float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of two ranked lists (the classic baseline)."""
    scores: dict[str, float] = {}
    for ranked in (vec, kw):
        for rank, (cid, _s) in enumerate(ranked, 1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


fuse = fuse_rrf  # the name earlier code used


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


def search(config: Config, query: str, k: int = 10, mode: str | None = None,
           filters: Filters | None = None) -> list[Hit]:
    """One-shot search (opens and closes the index)."""
    searcher = Searcher(config)
    try:
        return searcher.search(query, k, mode, filters)
    finally:
        searcher.close()
