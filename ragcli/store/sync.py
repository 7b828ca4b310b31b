"""Putting a Chroma collection in step with the manifest, from the vector cache alone, and
the one walk over the collection that both this and `rag verify` (``store.check``) make."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .manifest import PENDING_META, Manifest, cached_vectors

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


@dataclass
class Differences:
    """How a store differs from the chunks it should hold, found in one walk of its pages."""

    seen: set[str] = field(default_factory=set)  # every id the store holds
    extra: dict[str, str] = field(default_factory=dict)  # unwanted id -> the path it is filed under
    moved: list[str] = field(default_factory=list)  # wanted ids filed under another path
    stale: list[str] = field(default_factory=list)  # wanted ids whose vector is not the cached one

    def missing(self, want) -> list[str]:
        return [cid for cid in want if cid not in self.seen]


def differences(store, want: dict[str, tuple[str, str]], db, dim: int) -> Differences:
    """Compare ``store`` with ``want`` (chunk id -> (path, vector cache key)); a vector is
    compared where the cache holds one of ``dim`` dimensions for it."""
    found = Differences()
    for ids, metas, embeddings in store.pages(_PAGE):
        found.seen.update(ids)
        mine = []
        for i, cid in enumerate(ids):
            path = (metas[i] or {}).get("path", "")
            if cid not in want:
                found.extra[cid] = path
                continue
            mine.append(i)
            if path != want[cid][0]:
                found.moved.append(cid)
        cached = cached_vectors(db, [want[ids[i]][1] for i in mine], dim)
        compare = [i for i in mine if embeddings is not None and want[ids[i]][1] in cached]
        alike = same_vectors([embeddings[i] for i in compare], [cached[want[ids[i]][1]] for i in compare])
        found.stale += [ids[i] for i, same in zip(compare, alike) if not same]
    return found


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
    found = differences(store, want, m.db, dim)
    extra = sorted(found.extra)
    if extra:
        store.delete(extra)
    todo = found.missing(want) + list(dict.fromkeys(found.moved + found.stale))
    for start in range(0, len(todo), _PAGE):
        part = todo[start:start + _PAGE]
        cached = m.cached_vectors([want[c][1] for c in part], dim)
        store.upsert(part, np.stack([cached[want[c][1]] for c in part]), [want[c][0] for c in part])
    return len(todo), len(extra), waiting


def _cached_keys(m: Manifest, dim: int) -> set[str]:
    return {k for (k,) in m.db.execute("SELECT key FROM vectors WHERE length(vec) = ?", (dim * 4,))}
