"""Keyword ranking on worker threads, so that a large index answers a warm query fast.

Ranking every FTS5 match by bm25 is the longest step of a query at scale (168k chunks of
MDN: 30 ms median, 65 ms p95, where a question of common words matches 10-30k chunks).
SQLite lets go of the GIL while it works, so the ranking runs on other threads while the
caller embeds the query and searches vectors, and a large index is ranked in rowid ranges,
one per core: FTS5 seeks to each range, bm25 over a range equals bm25 over the whole index
(its idf counts every chunk), and the parts' tops merge into the top. Below ``SPLIT_FROM``
chunks ranking takes a few ms, and the caller's own reader does it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..store import Index

SPLIT_FROM = 20_000  # chunks; below, one scan takes a few ms: ranked in the caller's thread
MAX_PARTS = 4


class KeywordRanker:
    """Each worker thread gets its own reader of the index (one SQLite connection each),
    opened on the first query that needs them: a small index never starts a thread."""

    def __init__(self, index: Index, parts: int | None = None, split_from: int = SPLIT_FROM):
        self._index = index
        self._parts = parts or max(1, min(os.cpu_count() or 1, MAX_PARTS))
        self._split_from = split_from
        self._pool: ThreadPoolExecutor | None = None
        self._readers: list[Index] = []

    def start(self, match: str, n: int, paths: Sequence[str] | None = None
              ) -> Callable[[], list[tuple[str, float]]]:
        """Start ranking; the returned function waits for the top ``n`` (id, bm25)."""
        end = self._index.rowid_end()
        if end <= self._split_from:
            top = self._index.keyword_search(match, n, paths)
            return lambda: top
        parts = self._parts
        pool = self._workers()
        bounds = [round(i * end / parts) for i in range(parts + 1)]
        futures = [pool.submit(self._readers[i].keyword_search, match, n, paths,
                               (bounds[i], bounds[i + 1]) if parts > 1 else None)
                   for i in range(parts)]

        def top() -> list[tuple[str, float]]:
            rows = [row for future in futures for row in future.result()]
            return sorted(rows, key=lambda row: -row[1])[:n] if parts > 1 else rows
        return top

    def _workers(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._parts, thread_name_prefix="ragcli-keywords")
            self._readers = [self._index.twin() for _ in range(self._parts)]
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for reader in self._readers:
            reader.close()
        self._readers = []
