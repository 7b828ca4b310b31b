"""The read side of an index that retrieval uses: keyword and vector search, exact cosines,
note centroids, chunk lookups and filters.

A part of ``Index``, given the index's manifest and its vector store (``live``): the write
protocol lives in ``index``, and nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..types import Chunk
from . import keywords
from .flat import FLAT_MAX_CHUNKS, FlatVectors
from .live import Vectors
from .manifest import Manifest
from .notes import note_centroids


class Searching:
    def __init__(self, manifest: Manifest, vectors: Vectors):
        self._m = manifest
        self._vectors = vectors
        self._idf: dict[str, float] = {}  # FTS5 term -> idf, for the index as of _idf_version
        self._idf_version: tuple[int, int] | None = None
        self._flat: tuple[int, FlatVectors | None] | None = None  # (generation, its flat search)

    def keyword_search(self, match: str, limit: int, paths: Sequence[str] | None = None,
                       rowids: tuple[int, int] | None = None) -> list[tuple[str, float]]:
        """The top ``limit`` (chunk id, bm25 with higher = better) for an FTS5 MATCH expression
        (among the chunks with a rowid in ``[low, high)`` when ``rowids`` is given)."""
        return keywords.keyword_search(self._m.db, match, limit, paths, rowids=rowids)

    def rowid_end(self) -> int:
        """One past the highest chunk rowid (the end of the range ``keyword_search`` splits)."""
        return self._m.db.execute("SELECT coalesce(max(rowid), 0) + 1 FROM chunks").fetchone()[0]

    def keyword_scores(self, match: str, ids: Sequence[str]) -> dict[str, float]:
        """The bm25 of those chunks ``ids`` that match (hybrid search's vector candidates)."""
        return keywords.keyword_scores(self._m.db, match, ids)

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

    def keyword_df(self, terms: Sequence[str]) -> list[int]:
        """How many chunks hold each term (a quoted FTS5 string)."""
        return keywords.keyword_df(self._m.db, terms)

    def respell(self, words: Sequence[str]) -> dict[str, str]:
        """Query words in no chunk -> the nearest indexed term (a stem), for spelling slips."""
        return keywords.respell(self._m.db, words)

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

    def note_centroids(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """chunk id -> the centroid of its note's chunk vectors, where known."""
        return note_centroids(self._m.db, ids, self._m.dim())

    def chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return self._m.chunks_by_ids(ids)

    def page_chunks(self, path: str, page: int) -> list[Chunk]:
        """The chunks of one page of a PDF, in order (its table rows come after its text)."""
        return self._m.page_chunks(path, page)

    def filter_paths(self, path_glob: str | None = None, tag: str | None = None,
                     since: str | None = None, until: str | None = None) -> list[str]:
        return keywords.filter_paths(self._m.db, path_glob, tag, since, until)
