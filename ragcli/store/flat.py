"""Exact vector search straight from the manifest's vector cache, for readers of a small index.

A new process that runs one search (``rag search`` with no watcher) spent most of its time
on Chroma: ``import chromadb`` and opening its client cost 0.8-1.5 s of a 0.9-2 s command,
for one top-k query. The manifest already holds every chunk's vector (step 1 of the write
protocol), so a small index is searched here instead: one SQLite read, one matrix product,
exact cosines rather than HNSW's approximate ones. The read grows with the index (about
10-20 us a chunk on the 2-core box), so past ``FLAT_MAX_CHUNKS`` Chroma's fixed cost is the
cheaper one and ``Index`` uses it. Every reader of a small index searches here, the
watcher's too, so a search gives the same bytes through any door. The manifest is the
truth, so the results are those a Chroma in step with it gives, or better (exact); chunks
without a vector yet are absent from both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

# Chunks up to which a one-off reader searches the cache rather than opening Chroma: ~0.1-0.3 s
# of reading at this size against Chroma's ~0.8-1.5 s to import and open (help vault: 1.8k).
FLAT_MAX_CHUNKS = 15_000


class FlatVectors:
    """The chunks' cached vectors as one matrix, read once per index generation."""

    def __init__(self, db: sqlite3.Connection, dim: int):
        rows = db.execute("SELECT c.id, c.path, v.vec FROM chunks c JOIN vectors v ON v.key = c.vec_key"
                          " WHERE length(v.vec) = ?", (dim * 4,)).fetchall()
        self.ids = [r[0] for r in rows]
        self.paths = [r[1] for r in rows]
        blob = b"".join(r[2] for r in rows)
        self.matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), dim) if rows else \
            np.zeros((0, dim), dtype=np.float32)

    def query(self, vector: np.ndarray, k: int, paths: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, cosine) of the k nearest chunks (vectors are unit length), within ``paths``."""
        if paths is not None and not paths:
            return []
        rows = np.arange(len(self.ids))
        if paths is not None:
            allowed = set(paths)
            rows = np.fromiter((i for i, p in enumerate(self.paths) if p in allowed), dtype=np.int64)
        if not len(rows) or k <= 0:
            return []
        scores = self.matrix[rows] @ np.asarray(vector, dtype=np.float32)
        k = min(k, len(rows))
        top = np.argpartition(-scores, k - 1)[:k]
        # ties broken by id, as the rest of retrieval does, so a run is reproducible
        order = sorted(top, key=lambda i: (-float(scores[i]), self.ids[rows[i]]))
        return [(self.ids[rows[i]], float(scores[i])) for i in order]
