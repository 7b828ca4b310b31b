"""Note-level vectors for retrieval: the centroid of each note's chunk vectors.

The centroid is derived data (the mean of cached chunk vectors), so an index built before
notes had centroids is upgraded in place by its next writer (``fill_missing_centroids``),
from the vector cache, with no re-embedding and no rebuild."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from .manifest import rows_in


def note_centroids(db: sqlite3.Connection, ids: Sequence[str], dim: int) -> dict[str, np.ndarray]:
    """chunk id -> the centroid of its note, for the chunks whose note has one."""
    result: dict[str, np.ndarray] = {}
    by_path: dict[str, np.ndarray | None] = {}
    rows = rows_in(db, "SELECT c.id, c.path, n.centroid FROM chunks c JOIN notes n ON n.path = c.path"
                       " WHERE c.id IN", list(ids))
    for cid, path, blob in rows:
        if path not in by_path:
            vec = np.frombuffer(blob, dtype=np.float32)
            by_path[path] = vec if vec.shape[0] == dim else None
        if by_path[path] is not None:
            result[cid] = by_path[path]
    return result


CENTROIDS_META = "note_centroids"  # "1" once every note with chunks has its centroid


def fill_missing_centroids(db: sqlite3.Connection, dim: int, paths: Sequence[str] | None = None,
                           commit: bool = True) -> int:
    """Compute the centroid of every note that has chunks and no centroid (of ``paths`` only,
    when given), from the vector cache (a note with a chunk not embedded yet waits for it).
    Commits unless told not to; returns how many notes were filled. Cheap when run again: it
    only reads what is missing."""
    if paths is None:
        missing = [p for (p,) in db.execute(
            "SELECT DISTINCT c.path FROM chunks c LEFT JOIN notes n ON n.path = c.path WHERE n.path IS NULL")]
    else:
        have = {p for (p,) in rows_in(db, "SELECT path FROM notes WHERE path IN", list(paths))}
        missing = [p for p in paths if p not in have]
    filled = 0
    for path in missing:
        rows = db.execute("SELECT v.vec FROM chunks c LEFT JOIN vectors v ON v.key = c.vec_key"
                          " WHERE c.path = ?", (path,)).fetchall()
        vectors = [np.frombuffer(blob, dtype=np.float32) for (blob,) in rows if blob is not None]
        if not vectors or len(vectors) != len(rows) or any(v.shape[0] != dim for v in vectors):
            continue
        db.execute("INSERT OR REPLACE INTO notes(path, centroid) VALUES (?, ?)",
                   (path, unit_mean(vectors).tobytes()))
        filled += 1
    if paths is None:
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, '1')", (CENTROIDS_META,))
    if commit:
        db.commit()
    return filled


def unit_mean(vectors) -> np.ndarray:
    """The mean of the vectors, scaled to unit length (float32)."""
    centroid = np.mean(np.asarray(vectors, dtype=np.float32), axis=0)
    return (centroid / max(float(np.linalg.norm(centroid)), 1e-12)).astype(np.float32)
