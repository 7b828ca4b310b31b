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
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..config import Config, ensure_private_dir
from ..errors import NoIndexError, StoreError
from .fingerprint import Fingerprint, check_model, mismatch_error
from .lock import WriteLock
from .manifest import FileRecord, Manifest, StoredChunk
from .notes import CENTROIDS_META, fill_missing_centroids
from .paths import CHROMA_NAME, LOCK_NAME, MANIFEST_NAME
from .recovery import forget_chroma_clients
from .remote import META_KEY, catch_up, new_collection_name, remote_collection
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


class Index(Searching, Repairs):
    """Open with ``Index.open_reader`` or ``Index.open_writer`` (which takes the write lock)."""

    def __init__(self, config: Config, manifest: Manifest, lock: WriteLock | None = None,
                 beside: "Index | None" = None):
        self.config = config
        self.dir = config.index_dir
        self._m = manifest
        self.lock = lock
        self._beside = beside  # the writer in this same process (see ``open_reader``)
        self._vectors = None
        self._vectors_generation = -1
        self._ahead = None  # a vectors.OpenAhead: the local store being opened on a thread
        self._idf: dict[str, float] = {}  # FTS5 term -> idf, for the index as of _idf_version
        self._idf_version: tuple[int, int] | None = None
        self._caught_up = False  # a writer on a Chroma server compared its collection once
        self.in_write = False  # true while a write is between marking and committing

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open_reader(cls, config: Config, beside: "Index | None" = None) -> "Index":
        """A reader; ``beside``: the writer of this same process (the watcher serving searches).
        Chroma's one system per folder and process sees its writes: shared, never reopened."""
        if not index_exists(config):
            raise NoIndexError(f"no index at {config.index_dir}")
        try:
            return cls(config, Manifest(config.index_dir / MANIFEST_NAME), beside=beside)
        except Exception as exc:  # noqa: BLE001 - a damaged manifest fails in many ways, all "cannot open"
            raise StoreError(f"{config.index_dir / MANIFEST_NAME}: cannot open the index: {exc}") from None

    @classmethod
    def open_writer(cls, config: Config, role: str = "index", wait: float = 0.0) -> "Index":
        ensure_private_dir(config.data_dir)
        ensure_private_dir(config.index_dir)
        lock = WriteLock(config.index_dir / LOCK_NAME, role).acquire(wait=wait)
        try:
            index = cls(config, Manifest(config.index_dir / MANIFEST_NAME), lock)
            if not index._m.get_meta(META_KEY):  # name this index's collection on a Chroma server
                index._m.set_meta(META_KEY, new_collection_name(index.counts()[1] > 0, config))
            if index._m.get_meta(CENTROIDS_META) != "1" and index._dim():
                fill_missing_centroids(index._m.db, index._dim())  # an index from before centroids
            index.recover()
            if config.chroma_url:
                index.vectors  # noqa: B018 - opening a server's collection catches it up
            return index
        except BaseException:
            lock.release()
            raise

    def close(self) -> None:
        if self._ahead is not None:  # never exit with Chroma half-loaded on a thread
            try:
                self._ahead.result()
            except Exception:  # noqa: BLE001 - nobody wanted the store; its error does not matter
                pass
            self._ahead = None
        self.drop_vectors()
        self._m.close()
        if self.lock:
            self.lock.release()
            self.lock = None

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- settings ---------------------------------------------------------------------------
    def roots(self) -> list[str]:
        return self._m.get_json("roots", []) or []

    def remember_roots(self, roots: Iterable[str]) -> None:
        self._m.set_json("roots", sorted({*self.roots(), *map(str, roots)}))

    def fingerprint(self) -> dict | None:
        return self._m.get_json("fingerprint")

    def adopt_fingerprint(self, wanted: Fingerprint, rebuild: bool = False) -> None:
        """Refuse to mix vectors of different models or chunkers; ``rebuild`` starts over."""
        have = self.fingerprint()
        if have is None or rebuild or self._m.counts()[1] == 0:
            if rebuild and have is not None:
                self.wipe()
            self._m.set_json("fingerprint", wanted.as_dict())
            self._m.set_meta(CENTROIDS_META, "1")  # every note written from now on gets one
            return
        if have != wanted.as_dict():
            raise mismatch_error(have, wanted.as_dict())

    def check_chunker(self, chunker: dict) -> None:
        """Settings that change the chunks are checked on every run, even with nothing to do."""
        have = self.fingerprint()
        if have and have.get("chunker") != chunker:
            raise mismatch_error({"chunker": have.get("chunker")}, {"chunker": chunker})

    def check_model(self, model_id: str, dim: int, settings: dict | None = None) -> None:
        """A reader's check that its embedder is the one the index was built with."""
        check_model(self.fingerprint(), model_id, dim, settings)

    def _dim(self) -> int:
        return int((self.fingerprint() or {}).get("dim", 0))

    # -- what is there ----------------------------------------------------------------------
    def files(self, root: str | None = None) -> dict[str, FileRecord]:
        return self._m.files(root)

    def paths(self) -> set[str]:
        """The paths of the indexed files (cheaper than ``files()`` when that is all)."""
        return self._m.paths()

    def file(self, path: str) -> FileRecord | None:
        """The record of one indexed file (its path exactly as indexed), or None."""
        return self._m.file(path)

    def counts(self) -> tuple[int, int]:
        """(files, chunks)"""
        return self._m.counts()

    def generation(self) -> int:
        return self._m.generation()

    def last_indexed(self) -> float | None:
        last = self._m.get_meta("last_indexed")
        return float(last) if last else None

    def size_bytes(self) -> int:
        total = 0
        for root, _dirs, files in os.walk(self.dir):
            for name in files:
                try:
                    total += os.path.getsize(os.path.join(root, name))
                except OSError:
                    pass
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

    def dependents(self, paths: Iterable[str]) -> set[str]:
        """Notes that embed any of ``paths`` (their text includes the embedded note's)."""
        return self._m.dependents(paths)

    # -- writing ----------------------------------------------------------------------------
    def cached_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return self._m.cached_vectors(keys, self._dim())

    def cache_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Step 1 of the write protocol on its own: vectors kept even if the run dies next."""
        self._m.cache_vectors(items, unused=True)
        self._m.db.commit()

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
        self.in_write = True
        try:
            m.set_meta("vectors_dirty", "1", commit=False)
            m.db.commit()
            if to_add:
                vecs = self._vectors_for([s.vec_key for s in to_add], new_vectors)
                self.vectors.upsert([s.chunk.id for s in to_add], vecs, [s.chunk.path for s in to_add])
            if to_delete:
                self.vectors.delete(to_delete)
            for u in updates:
                m.replace_file(u.record, u.chunks, u.centroid)
            for path in removals:
                m.remove_file(path)
            m.set_meta("vectors_dirty", "0", commit=False)
            m.commit_write()
        finally:
            self.in_write = False
        return len(to_add), len(to_delete)

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
        self.vectors.reset()
        self._m.clear()
        self._m.set_meta("vectors_dirty", "0")

    def _vectors_for(self, keys: Sequence[str], fresh: dict[str, np.ndarray]) -> np.ndarray:
        missing = [k for k in keys if k not in fresh]
        cached = self._m.cached_vectors(missing, self._dim()) if missing else {}
        return np.stack([fresh[k] if k in fresh else cached[k] for k in keys])

    # -- the vector side --------------------------------------------------------------------
    @property
    def vectors(self):
        """The Chroma store, opened on first use (and reopened when another process wrote: an
        on-disk Chroma client can miss another process's writes; a server never does)."""
        if self._beside is not None:  # the writer's store (an attribute read: its SQLite untouched)
            live = self._beside._vectors
            if live is None and self._vectors is None:
                self._vectors = self._open_vectors()  # no forgetting: that would close the writer's
            return live if live is not None else self._vectors
        generation = self._m.generation()
        remote = bool(self.config.chroma_url)
        if self._vectors is None and self._ahead is not None:
            self._vectors, self._ahead = self._ahead.result(), None
            self._vectors_generation = generation
        elif self._vectors is None or (not remote and self.lock is None and generation != self._vectors_generation):
            self._vectors = self._open_vectors(fresh=self._vectors is not None)
            self._vectors_generation = generation
            if remote and not self._caught_up:
                from .sync import sync_into

                self._caught_up = True
                fill = (lambda store: sync_into(self._m, self._dim(), store)) if self.lock else None
                catch_up(self._vectors, self._m.counts()[1], self.config.chroma_url, fill)
        return self._vectors

    def open_vectors_ahead(self, in_child: bool = False) -> None:
        """Start opening the local vector store while this writer goes on: a writer calls this
        once it knows it will write, and parses and embeds meanwhile. ``in_child``: in a child
        process (``vector_child``: a writer that exits soon; the loading cannot stall it), else
        on a thread (``vectors.OpenAhead``: a long-lived writer keeps the store in process)."""
        if self._vectors is not None or self._ahead is not None or self.config.chroma_url:
            return
        # Chroma keeps one system per folder and process: where this process has imported it, a
        # reader here may hold one, which would not see a child's writes. Then the thread.
        if in_child and "chromadb" not in sys.modules:
            from .vector_child import ChildStore

            try:
                self._vectors = ChildStore(self.dir / CHROMA_NAME, self.lock.fd if self.lock else None)
                self._vectors_generation = self._m.generation()
                return
            except OSError:  # no child to be had (an interpreter this user may not start): a thread
                pass
        from .vectors import OpenAhead

        self._ahead = OpenAhead(self.dir / CHROMA_NAME)

    def drop_vectors(self) -> None:
        """Let go of the vector store (a child process holding it leaves before this returns)."""
        store, self._vectors = self._vectors, None
        if store is not None:
            store.close()

    def _open_vectors(self, fresh: bool = False):
        from .vectors import ChromaStore

        if self.config.chroma_url:
            return ChromaStore.remote(self.config.chroma_url, name=self.collection())
        if fresh:
            forget_chroma_clients()
        return ChromaStore.persistent(self.dir / CHROMA_NAME)

    def collection(self) -> str:
        """This index's collection on the Chroma server (``store.remote``)."""
        return remote_collection(self.config, self._m.get_meta)
