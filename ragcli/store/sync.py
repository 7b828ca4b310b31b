"""Putting a Chroma collection in step with the manifest, from the vector cache alone."""

from __future__ import annotations

import numpy as np

from .manifest import PENDING_META, Manifest

_PAGE = 2000


def same_vectors(have: list, want: list[np.ndarray | None]) -> list[bool]:
    """Is each stored vector its cached one (to float32 rounding; None is no vector)? Many pairs
    at once (verify compares every vector: one allclose per vector was 5 s of 50 on 64k chunks)."""
    out = [False] * len(have)
    rows = [np.asarray(h, dtype=np.float32) for h in have]
    alike = [i for i, (h, w) in enumerate(zip(rows, want)) if w is not None and h.shape == w.shape and h.ndim == 1]
    by_dim: dict[int, list[int]] = {}
    for i in alike:
        by_dim.setdefault(rows[i].shape[0], []).append(i)
    for group in by_dim.values():
        close = np.isclose(np.stack([rows[i] for i in group]), np.stack([want[i] for i in group]),
                           rtol=1e-4, atol=1e-5).all(axis=1)
        for i, ok in zip(group, close):
            out[i] = bool(ok)
    return out


def sync_into(m: Manifest, dim: int, store) -> tuple[int, int, list[str]]:
    """Make ``store`` hold exactly the manifest's chunk ids, paths and cached vectors.

    A chunk whose vector is not in the cache waits for it (phase two of the next run embeds
    it, as it does for chunks phase one wrote): the store must not hold a vector for it.
    Returns (vectors written, vectors deleted, paths with chunks waiting for a vector).
    """
    waiting = m.paths_with_uncached_vectors(dim)
    if waiting:
        m.set_meta(PENDING_META, "1")
    cached_keys = _cached_keys(m, dim)
    want = {cid: (path, key) for cid, path, key in m.stored_chunks() if key in cached_keys}
    have: set[str] = set()
    wrong: list[str] = []  # present, but under another path or with another vector
    for ids, metas, embeddings in store.pages(_PAGE):
        keys = [want[c][1] for c in ids if c in want]
        cached = m.cached_vectors(keys, dim) if keys else {}
        have.update(ids)
        mine = [i for i, cid in enumerate(ids) if cid in want]
        alike = same_vectors([None if embeddings is None else embeddings[i] for i in mine],
                             [cached.get(want[ids[i]][1]) for i in mine])
        wrong += [ids[i] for i, same in zip(mine, alike)
                  if not same or (metas[i] or {}).get("path") != want[ids[i]][0]]
    extra = sorted(have - want.keys())
    if extra:
        store.delete(extra)
    todo = [cid for cid in want if cid not in have] + wrong
    for start in range(0, len(todo), _PAGE):
        part = todo[start:start + _PAGE]
        cached = m.cached_vectors([want[c][1] for c in part], dim)
        store.upsert(part, np.stack([cached[want[c][1]] for c in part]), [want[c][0] for c in part])
    return len(todo), len(extra), waiting


def _cached_keys(m: Manifest, dim: int) -> set[str]:
    return {k for (k,) in m.db.execute("SELECT key FROM vectors WHERE length(vec) = ?", (dim * 4,))}
