"""The read side of an index that retrieval uses: keyword and vector search, exact cosines,
note centroids, chunk lookups and filters.

A part of ``Index``, given the index's manifest and its vector store (``live``): the write
protocol lives in ``index``, and nothing here writes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from . import keywords
from .flat import FLAT_MAX_CHUNKS, FlatVectors
from .live import Vectors
from .manifest import Manifest, rows_in
from .notes import note_centroids


def _on_db(func):
    """A ``keywords`` function as a method, run on the manifest's connection."""
    @functools.wraps(func)
    def method(self, *args, **kwargs):
        return func(self._m.db, *args, **kwargs)
    return method


class Searching:
    keyword_search = _on_db(keywords.keyword_search)
    keyword_scores = _on_db(keywords.keyword_scores)
    keyword_df = _on_db(keywords.keyword_df)
    holds_phrase = _on_db(keywords.holds_phrase)
    respell = _on_db(keywords.respell)
    filter_paths = _on_db(keywords.filter_paths)
    dated_files = _on_db(keywords.dated_files)

    def __init__(self, manifest: Manifest, vectors: Vectors):
        self._m = manifest
        self._vectors = vectors
        self._idf: dict[str, float] = {}  # FTS5 term -> idf, for the index as of _idf_version
        self._idf_version: tuple[int, int] | None = None
        self._flat: tuple[int, FlatVectors | None] | None = None  # (generation, its flat search)

    def rowid_end(self) -> int:
        """One past the highest chunk rowid (the end of the range ``keyword_search`` splits)."""
        return self._m.db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM chunks").fetchone()[0]

    def keyword_idf(self, terms: Sequence[str]) -> list[float]:
        """Each term's bm25 idf, remembered until the index changes: counting a common
        term's chunks is a scan of its whole doclist (4-8 ms a query at 168k chunks)."""
        db = self._m.db
        version = (db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
        if version != self._idf_version or len(self._idf) > 50_000:
            self._idf, self._idf_version = {}, version
        missing = [t for t in dict.fromkeys(terms) if t not in self._idf]
        if missing:
            self._idf.update(zip(missing, keywords.keyword_idf(db, missing)))
        return [self._idf[t] for t in terms]

    def vector_search(self, vector: np.ndarray, k: int,
                      paths: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, cosine) of the k nearest chunks, optionally within ``paths``."""
        flat = self.flat_vectors()
        return (flat or self._vectors.store()).query(vector, k, paths)

    def flat_vectors(self) -> FlatVectors | None:
        """Exact search from the vector cache for a reader of an index small enough
        (``store.flat``): a one-off search never imports chromadb. Every reader of such an
        index uses it, the watcher's too, so each door gives the same hits to the last bit.
        None for a writer, on a Chroma server, or for a large index (Chroma answers)."""
        if self._vectors.writes or self._vectors.config.chroma_url:
            return None
        generation = self._m.generation()
        if self._flat is None or self._flat[0] != generation:
            small = self._m.counts()[1] <= FLAT_MAX_CHUNKS
            self._flat = (generation, FlatVectors(self._m.db, self._m.dim()) if small else None)
        return self._flat[1]

    def cosines(self, vector: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
        """Exact cosine of ``vector`` with chunks, from the manifest's vector cache."""
        if not ids:
            return {}
        keys = {cid: key for cid, _path, key in self._m.stored_chunks(list(ids))}
        dim = self._m.dim() or int(vector.shape[0])
        vectors = self._m.cached_vectors(list(set(keys.values())), dim)
        q = np.asarray(vector, dtype=np.float32)
        return {cid: float(vectors[key] @ q) for cid, key in keys.items() if key in vectors}

    def note_headings(self, path: str) -> list[str]:
        """The headings a note's chunks stand under, in the note's order, each once."""
        rows = self._m.db.execute("SELECT heading FROM chunks WHERE path = ? ORDER BY ordinal", (path,))
        return list(dict.fromkeys(row[0] for row in rows))

    def chunk_pages(self, ids: Sequence[str]) -> dict[str, tuple[str, int]]:
        """The (path, page) of each chunk of ``ids`` that stands on a PDF page."""
        sql = "SELECT id, path, page FROM chunks WHERE page IS NOT NULL AND id IN"
        return {cid: (path, page) for cid, path, page in rows_in(self._m.db, sql, ids)}

    def note_centroids(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """chunk id -> the centroid of its note's chunk vectors, where known."""
        return note_centroids(self._m.db, ids, self._m.dim())
