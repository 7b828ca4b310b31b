"""Note-level vectors, read for retrieval: the centroid of each note's chunk vectors."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np


def note_centroids(db: sqlite3.Connection, ids: Sequence[str], dim: int) -> dict[str, np.ndarray]:
    """chunk id -> the centroid of its note, for the chunks whose note has one. An index
    built before notes had centroids (no table) has none, and search goes on without."""
    result: dict[str, np.ndarray] = {}
    by_path: dict[str, np.ndarray | None] = {}
    ids = list(ids)
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        try:
            rows = db.execute("SELECT c.id, c.path, n.centroid FROM chunks c JOIN notes n ON n.path = c.path"
                              f" WHERE c.id IN ({','.join('?' * len(part))})", part).fetchall()
        except sqlite3.OperationalError:
            return {}
        for cid, path, blob in rows:
            if path not in by_path:
                vec = np.frombuffer(blob, dtype=np.float32)
                by_path[path] = vec if vec.shape[0] == dim else None
            if by_path[path] is not None:
                result[cid] = by_path[path]
    return result
