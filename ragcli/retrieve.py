"""Search the index: vector (Chroma), keyword (SQLite FTS5), or both fused.

Filters are resolved to the set of matching files first and applied inside both
searches, so a filter never empties a result that a top-k cut made before it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .config import Config
from .errors import UsageError
from .store import Index
from .types import Hit

MODES = ("hybrid", "vector", "keyword")
RRF_K = 60
CANDIDATES = 50  # per side, before fusion

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Filters:
    path: str | None = None  # glob on the absolute path ("*/Projects/*"), or a suffix
    tag: str | None = None
    since: str | None = None  # ISO date, inclusive
    until: str | None = None

    def active(self) -> bool:
        return any((self.path, self.tag, self.since, self.until))


class Searcher:
    """Holds the index and the embedder between queries (chat, eval, the watcher's readers)."""

    def __init__(self, config: Config, index: Index | None = None):
        self.config = config
        self.index = index or Index.open_reader(config)
        self._embedder = None

    def close(self) -> None:
        self.index.close()

    @property
    def embedder(self):
        if self._embedder is None:
            from .embed import make_embedder
            from .pipeline import index_fingerprint

            self._embedder = make_embedder(self.config)
            have = self.index.fingerprint()
            if have is not None:
                want = index_fingerprint(self.config, self._embedder)
                if have.get("embedding_model") != want["embedding_model"] or have.get("dim") != want["dim"]:
                    from .errors import IndexMismatchError
                    from .store import describe_mismatch

                    raise IndexMismatchError(describe_mismatch(have, want))
        return self._embedder

    def search(self, query: str, k: int = 10, mode: str | None = None,
               filters: Filters | None = None) -> list[Hit]:
        mode = mode or self.config.mode
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", hint=f"Use one of: {', '.join(MODES)}")
        query = query.strip()
        if not query:
            return []
        paths = self._allowed_paths(filters)
        vec = self.vector_side(query, CANDIDATES, paths) if mode != "keyword" else []
        kw = self.keyword_side(query, CANDIDATES, paths) if mode != "vector" else []
        ranked = fuse(vec, kw) if mode == "hybrid" else [(cid, s) for cid, s in (vec or kw)]
        return self._hits(ranked[:k], dict(vec), dict(kw))

    def _allowed_paths(self, filters: Filters | None) -> list[str] | None:
        if not filters or not filters.active():
            return None
        return self.index.manifest.filter_paths(filters.path, filters.tag, filters.since, filters.until)

    def vector_side(self, query: str, n: int, paths: Sequence[str] | None) -> list[tuple[str, float]]:
        vector = self.embedder.embed([query])[0]
        return self.index.vectors.query(vector, n, paths)

    def keyword_side(self, query: str, n: int, paths: Sequence[str] | None) -> list[tuple[str, float]]:
        return self.index.manifest.keyword_search(fts_query(query), n, paths)

    def _hits(self, ranked: list[tuple[str, float]], vec: dict, kw: dict) -> list[Hit]:
        chunks = self.index.manifest.chunks_by_ids([cid for cid, _ in ranked])
        hits = []
        for cid, score in ranked:
            if cid in chunks:  # a chunk Chroma still knows but the manifest dropped is skipped
                hits.append(Hit(chunks[cid], float(score), len(hits) + 1, vec.get(cid), kw.get(cid)))
        return hits


def fuse(vec: list[tuple[str, float]], kw: list[tuple[str, float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of two ranked lists."""
    scores: dict[str, float] = {}
    for ranked in (vec, kw):
        for rank, (cid, _s) in enumerate(ranked, 1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def fts_query(text: str) -> str:
    """Words OR-ed as quoted FTS5 strings: user text can never be FTS5 syntax."""
    words = [w for w in _WORD.findall(text.lower()) if len(w) > 1 or w.isdigit()]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


def search(config: Config, query: str, k: int = 10, mode: str | None = None,
           filters: Filters | None = None) -> list[Hit]:
    """One-shot search (opens and closes the index)."""
    searcher = Searcher(config)
    try:
        return searcher.search(query, k, mode, filters)
    finally:
        searcher.close()
