"""The index: the manifest (SQLite: files, chunks, keywords, vector cache) plus Chroma vectors.

``Index`` is the only way in. Callers ask for what they want (plan a sync, apply a batch,
remove files, keyword or vector search, roots, fingerprint); nothing outside ``store/``
touches SQLite or Chroma, and only ``Index`` commits, so the write protocol below holds
whoever calls.

Write protocol, which is what keeps a killed process from ever needing a manual fix:
1. new vectors go into the manifest's cache (committed; harmless on its own);
2. the manifest is marked ``vectors_dirty`` and Chroma gets the upserts and deletes;
3. one SQLite transaction swaps the files' chunk rows and clears the mark.
A crash between 2 and 3 leaves Chroma ahead of the manifest. The next writer sees the
mark, checks that Chroma still opens (in a child process: a damaged native index can
kill the process) and puts Chroma back in step with the manifest from the cache, with
no re-embedding. The manifest is always the truth.

On a Chroma server (``chroma_url``) the same protocol holds; there is no folder to probe
or swap: a writer puts the index's collection (``store.remote``) back in step from the
cache when the mark is set, or when the collection does not hold as many vectors as the
manifest has chunks (a server that lost its data, an index moved onto a server).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import numpy as np

from ..closing import Closing
from ..config import Config, ensure_private_dir
from ..errors import NoIndexError, StoreError
from .fingerprint import Fingerprint, check_model, chunker_upgraded, mismatch_error, same_but_for_model
from .lock import WriteLock
from .manifest import FileRecord, Manifest, StoredChunk
from .notes import CENTROIDS_META, fill_missing_centroids
from .manifest import PENDING_META
from .paths import LOCK_NAME, MANIFEST_NAME
from .live import BorrowedVectors, ReaderVectors, Vectors, WriterVectors
from .remote import META_KEY, new_collection_name
from .repair import Repairs
from .searching import Searching


@dataclass
class FileUpdate:
    """A file's new state: its record, its chunks, and the vectors of those chunks."""

    record: FileRecord
    chunks: list[StoredChunk]
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # vec_key -> vector
    centroid: np.ndarray | None = None  # the mean of the chunks' vectors, unit length


@dataclass
class SyncPlan:
    """What a sync of some files against the index has to do (``Index.plan``)."""

    unchanged: list[str] = field(default_factory=list)  # same size and mtime: nothing to read
    suspects: dict[str, str] = field(default_factory=dict)  # stat moved: path -> recorded hash
    new: list[str] = field(default_factory=list)  # not in the index yet
    removed: list[str] = field(default_factory=list)  # in the index, gone from disk


def index_exists(config: Config) -> bool:
    return (config.index_dir / MANIFEST_NAME).is_file()


def _part(part: str, name: str) -> property:
    """``Index.<name>``: the method ``name`` of the index's part ``part``."""
    return property(lambda self: getattr(getattr(self, part), name),
                    doc=f"``{part}.{name}``, the index's public method.")


class Index(Closing):
    """Open with ``Index.open_reader`` or ``Index.open_writer`` (which takes the write lock).

    Its parts: ``vectors`` (the Chroma store's life, ``live``), ``reads`` (keyword and vector
    search, ``searching``) and ``repairs`` (``repair``); the write protocol is its own."""

    def __init__(self, config: Config, manifest: Manifest, lock: WriteLock | None = None,
                 vectors: Vectors | None = None):
        self.config = config
        self.dir = config.index_dir
        self._m = manifest
        self.lock = lock
        self.vectors = vectors or (WriterVectors(config, manifest) if lock else ReaderVectors(config, manifest))
        self.reads = Searching(manifest, self.vectors)
        self.repairs = Repairs(config, manifest, self.vectors)
        self.in_write = False  # true while a write is between marking and committing

    # The reads are the index's public surface (retrieval calls them on the index).
    keyword_search = _part("reads", "keyword_search")
    keyword_scores = _part("reads", "keyword_scores")
    keyword_idf = _part("reads", "keyword_idf")
    keyword_df = _part("reads", "keyword_df")
    holds_phrase = _part("reads", "holds_phrase")
    rowid_end = _part("reads", "rowid_end")
    respell = _part("reads", "respell")
    vector_search = _part("reads", "vector_search")
    flat_vectors = _part("reads", "flat_vectors")
    cosines = _part("reads", "cosines")
    note_centroids = _part("reads", "note_centroids")
    note_headings = _part("reads", "note_headings")
    chunk_pages = _part("reads", "chunk_pages")
    filter_paths = _part("reads", "filter_paths")
    dated_files = _part("reads", "dated_files")
    rebuild_keywords = _part("_m", "rebuild_keywords")
    drop_orphan_chunks = _part("_m", "drop_orphan_chunks")
    fill_centroids = _part("repairs", "fill_centroids")
    collection = _part("vectors", "collection")
    open_vectors_ahead = _part("vectors", "open_ahead")
    # What is there, as the manifest says.
    files = _part("_m", "files")
    paths = _part("_m", "paths")
    file = _part("_m", "file")
    chunks = _part("_m", "chunks_by_ids")
    chunk_ids_newest_first = _part("_m", "chunk_ids_newest_first")
    section_chunks = _part("_m", "section_chunks")
    page_chunks = _part("_m", "page_chunks")
    note_chunks = _part("_m", "note_chunks")
    counts = _part("_m", "counts")
    generation = _part("_m", "generation")
    dependents = _part("_m", "dependents")
    pending_vectors = _part("_m", "pending_vectors")
    pending_counts = _part("_m", "pending_counts")

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open_reader(cls, config: Config, beside: "Index | None" = None) -> "Index":
        """A reader; ``beside``: the writer of this same process (the watcher serving searches),
        whose vector store it uses (``live.BorrowedVectors``)."""
        if not index_exists(config):
            raise NoIndexError(f"no index at {config.index_dir}")
        try:
            manifest = Manifest(config.index_dir / MANIFEST_NAME)
        except Exception as exc:  # noqa: BLE001 - a damaged manifest fails in many ways, all "cannot open"
            raise StoreError(f"{config.index_dir / MANIFEST_NAME}: cannot open the index: {exc}") from None
        return cls(config, manifest,
                   vectors=None if beside is None else BorrowedVectors(config, manifest, beside.vectors))

    @classmethod
    def open_writer(cls, config: Config, role: str = "index", wait: float = 0.0) -> "Index":
        ensure_private_dir(config.data_dir)
        ensure_private_dir(config.index_dir)
        lock = WriteLock(config.index_dir / LOCK_NAME, role).acquire(wait=wait)
        try:
            index = cls(config, Manifest(config.index_dir / MANIFEST_NAME), lock)
            if not index._m.get_meta(META_KEY):  # name this index's collection on a Chroma server
                index._m.set_meta(META_KEY, new_collection_name())
            if index._m.get_meta(CENTROIDS_META) != "1" and index._m.dim():
                fill_missing_centroids(index._m.db, index._m.dim())  # an index from before centroids
            index.recover()
            if config.chroma_url:
                index.vectors.store()  # opening a server's collection catches it up
            return index
        except BaseException:
            lock.release()
            raise

    def twin(self) -> "Index":
        """Another reader on this manifest with its own SQLite connection, so that a thread
        can search keywords while this one embeds the query and searches vectors."""
        return type(self).open_reader(self.config)

    def close(self) -> None:
        self.vectors.close()
        self._m.close()
        if self.lock:
            self.lock.release()
            self.lock = None

    # -- settings ---------------------------------------------------------------------------
    def roots(self) -> list[str]:
        return self._m.get_json("roots", []) or []

    def remember_roots(self, roots: Iterable[str]) -> None:
        self._m.set_json("roots", sorted({*self.roots(), *map(str, roots)}))

    def fingerprint(self) -> dict | None:
        return self._m.get_json("fingerprint")

    def adopt_fingerprint(self, wanted: Fingerprint, rebuild: bool = False, same_vectors: Collection[str] = ()) -> None:
        """Refuse to mix vectors of different models or chunkers; ``rebuild`` starts over. An
        index built by a model of ``same_vectors`` is taken over: its fingerprint says ours."""
        have = self.fingerprint()
        wants = wanted.as_dict()
        upgraded = have is not None and {**have, "chunker": wants["chunker"]} == wants \
            and chunker_upgraded(have.get("chunker"), wants["chunker"])
        if have is None or rebuild or upgraded or self._m.counts()[1] == 0:
            if (rebuild or upgraded) and have is not None:
                self.wipe()
            self._m.set_json("fingerprint", wants)
            self._m.set_meta(CENTROIDS_META, "1")  # every note written from now on gets one
            return
        if have != wants:
            if not same_but_for_model(have, wants, same_vectors):
                raise mismatch_error(have, wants)
            self._m.set_json("fingerprint", wants)

    def check_chunker(self, chunker: dict) -> bool:
        """Settings that change the chunks are checked on every run, even with nothing to do.
        True when only ragcli's chunker version changed (``chunker_upgraded``): the run reads
        every file again."""
        have = self.fingerprint()
        if have and have.get("chunker") != chunker:
            if chunker_upgraded(have.get("chunker"), chunker):
                return True
            raise mismatch_error({"chunker": have.get("chunker")}, {"chunker": chunker})
        return False

    def check_model(self, model_id: str, dim: int, settings: dict | None = None,
                    same_vectors: Collection[str] = ()) -> None:
        """A reader's check that its embedder is the one the index was built with (or makes
        the same vectors: ``same_vectors``)."""
        check_model(self.fingerprint(), model_id, dim, settings, same_vectors)

    # -- what is there ----------------------------------------------------------------------
    def last_indexed(self) -> float | None:
        last = self._m.get_meta("last_indexed")
        return float(last) if last else None

    def size_bytes(self) -> int:
        total = 0
        for root, _dirs, files in os.walk(self.dir):
            for name in files:
                with suppress(OSError):
                    total += os.path.getsize(os.path.join(root, name))
        return total

    # -- planning a sync --------------------------------------------------------------------
    def plan(self, found: Mapping[str, tuple[int, int]], areas: Sequence[str],
             known: Mapping[str, FileRecord] | None = None) -> SyncPlan:
        """Compare files found on disk (path -> (size, mtime_ns)) under ``areas`` with the index.

        A file whose size and mtime are as recorded is unchanged without being read; one whose
        stat moved is a suspect (the caller hashes it); an indexed file under ``areas`` that was
        not found is removed. ``known``: the index's files, when the caller has read them.
        """
        known = self._m.files() if known is None else known
        plan = SyncPlan()
        for path, (size, mtime_ns) in found.items():
            rec = known.get(path)
            if rec is None:
                plan.new.append(path)
            elif rec.size == size and rec.mtime_ns == mtime_ns:
                plan.unchanged.append(path)
            else:
                plan.suspects[path] = rec.hash
        prefixes = [a.rstrip("/") + "/" for a in areas]
        plan.removed = sorted(p for p in known if p not in found
                              and any(p == a or p.startswith(pre) for a, pre in zip(areas, prefixes)))
        return plan

    def mark_unchanged(self, stats: Iterable[tuple[str, int, int]]) -> None:
        """Record a new size and mtime for files whose bytes (hash) did not change."""
        stats = list(stats)
        for path, size, mtime_ns in stats:
            self._m.touch_file(path, size, mtime_ns)
        if stats:
            self._m.db.commit()

    def forget_stat(self, paths: Iterable[str]) -> None:
        """Make the next sync read these files even if their size and mtime look unchanged."""
        self.mark_unchanged((p, -1, -1) for p in paths)

    # -- writing ----------------------------------------------------------------------------
    def cached_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return self._m.cached_vectors(keys, self._m.dim())

    def apply(self, updates: Sequence[FileUpdate], removals: Sequence[str] = ()) -> tuple[int, int]:
        """Apply file updates and removals; returns (chunks added, chunks removed)."""
        m = self._m
        new_vectors = {k: v for u in updates for k, v in u.vectors.items()}
        if new_vectors:
            m.cache_vectors(new_vectors.items())
        if m.get_meta("vectors_dirty", "0") == "1":  # an earlier write of this process failed half-way
            self.recover()
        old_keys: dict[str, str] = {}  # chunk id -> vec_key, for the files being replaced
        for path in [u.record.path for u in updates] + list(removals):
            old_keys.update({cid: key for cid, _p, key in m.stored_chunks_of(path)})
        new_ids = {s.chunk.id for u in updates for s in u.chunks}
        # A chunk whose id survives but whose embedded text changed (a new title) is re-sent.
        to_add = [s for u in updates for s in u.chunks if old_keys.get(s.chunk.id) != s.vec_key]
        to_delete = sorted(old_keys.keys() - new_ids)
        # Phase one of a run writes chunks whose vector is not made yet: keyword rows now, the
        # vector when phase two embeds it (``add_vectors``). Until then Chroma does not hold it.
        known = set(new_vectors) | set(self._m.cached_vectors([s.vec_key for s in to_add], self._m.dim()))
        waiting = [s for s in to_add if s.vec_key not in known]
        to_add = [s for s in to_add if s.vec_key in known]
        to_delete = sorted({*to_delete, *(s.chunk.id for s in waiting if s.chunk.id in old_keys)})
        with self._writing():
            if to_add or to_delete:  # Chroma is written: the mark goes in first (step 2 above).
                m.set_meta("vectors_dirty", "1", commit=False)  # Phase one of a new index writes
                m.db.commit()  # no vector: one commit a batch, not two
            if to_add:
                vecs = self._vectors_for([s.vec_key for s in to_add], new_vectors)
                self.vectors.store().upsert([s.chunk.id for s in to_add], vecs, [s.chunk.path for s in to_add])
            if to_delete:
                self.vectors.store().delete(to_delete)
            for u in updates:
                m.replace_file(u.record, u.chunks, u.centroid)
            for path in removals:
                m.remove_file(path)
            if waiting:
                m.set_meta(PENDING_META, "1", commit=False)
            m.set_meta("vectors_dirty", "0", commit=False)
            m.commit_write()
        return len(to_add) + len(waiting), len(to_delete)

    def pending_done(self) -> None:
        """Phase two found nothing left to embed: notes whose last vector came in a write that
        was killed before its centroid did get it now, and searches stop counting."""
        if self._m.get_meta(PENDING_META) == "1" and not self._m.pending_vectors(1):
            fill_missing_centroids(self._m.db, self._m.dim())
            self._m.set_meta(PENDING_META, "0")

    def add_vectors(self, items: Mapping[str, np.ndarray]) -> int:
        """Phase two's write: vectors of chunks written without one. Returns the chunks sent.

        The vectors are cached and the index marked ``vectors_dirty`` in one commit, so a kill
        before the end leaves what ``recover`` finishes from the cache: nothing is embedded
        twice, and Chroma never holds a vector the cache lacks."""
        m = self._m
        if not items:
            return 0
        m.cache_vectors(items.items())
        with self._writing():
            m.set_meta("vectors_dirty", "1", commit=False)
            m.db.commit()
            rows = m.chunks_with_keys(list(items))
            if rows:
                self.vectors.store().upsert([cid for cid, _p, _k in rows], np.stack([items[k] for _c, _p, k in rows]),
                                            [p for _c, p, _k in rows])
            fill_missing_centroids(m.db, m.dim(), sorted({p for _c, p, _k in rows}), commit=False)
            m.set_meta("vectors_dirty", "0", commit=False)
            m.commit_write()
        return len(rows)

    def remove(self, paths: Sequence[str]) -> int:
        """Forget files; returns the chunks removed."""
        return self.apply([], paths)[1] if paths else 0

    def prune(self) -> int:
        """Drop cached vectors no chunk uses: deleted notes' text must not linger."""
        dropped = self._m.prune_vectors()
        self._m.db.commit()
        return dropped

    def wipe(self) -> None:
        """Forget every file and chunk (for --rebuild); the vector cache stays."""
        self._m.set_meta("vectors_dirty", "1")
        self.vectors.store().reset()
        self._m.clear()
        self._m.set_meta("vectors_dirty", "0")

    def _vectors_for(self, keys: Sequence[str], fresh: dict[str, np.ndarray]) -> np.ndarray:
        missing = [k for k in keys if k not in fresh]
        cached = self._m.cached_vectors(missing, self._m.dim()) if missing else {}
        return np.stack([fresh[k] if k in fresh else cached[k] for k in keys])

    # -- the vector side and its repairs -----------------------------------------------------
    def recover(self) -> None:
        """Bring Chroma back in step with the manifest after a run that was killed mid-write."""
        with self._writing():
            self.repairs.recover()

    def rebuild_vectors(self) -> list[str]:
        """``repair.Repairs.rebuild_vectors``: Chroma built afresh from the vector cache."""
        with self._writing():
            return self.repairs.rebuild_vectors()

    @contextmanager
    def _writing(self):
        """``in_write`` while a write is between marking and committing: a watcher that is told
        to stop then waits for it."""
        self.in_write = True
        try:
            yield
        finally:
            self.in_write = False
