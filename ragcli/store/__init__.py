"""The index: the manifest (SQLite: files, chunks, keywords, vector cache) plus Chroma vectors.

Write protocol, which is what keeps a killed process from ever needing a manual fix:
1. new vectors go into the manifest's cache (committed; harmless on its own);
2. the manifest is marked ``vectors_dirty`` and Chroma gets the upserts and deletes;
3. one SQLite transaction swaps the files' chunk rows and clears the mark.
A crash between 2 and 3 leaves Chroma ahead of the manifest. The next writer sees the
mark, checks that Chroma still opens (in a child process: a damaged native index can
kill the process) and puts Chroma back in step with the manifest from the cache, with
no re-embedding. The manifest is always the truth.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import Config, ensure_private_dir
from ..errors import IndexMismatchError, NoIndexError, StoreError
from .lock import WriteLock
from .manifest import FileRecord, Manifest, StoredChunk

MANIFEST_NAME = "manifest.sqlite"
CHROMA_NAME = "chroma"
LOCK_NAME = "write.lock"


@dataclass
class FileUpdate:
    """A file's new state: its record, its chunks, and the vectors of those chunks."""

    record: FileRecord
    chunks: list[StoredChunk]
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # vec_key -> vector


def index_exists(config: Config) -> bool:
    return (config.index_dir / MANIFEST_NAME).is_file()


class Index:
    """Open with ``Index.open_reader`` or ``Index.open_writer`` (which takes the write lock)."""

    def __init__(self, config: Config, manifest: Manifest, lock: WriteLock | None = None):
        self.config = config
        self.dir = config.index_dir
        self.manifest = manifest
        self.lock = lock
        self._vectors = None
        self._vectors_generation = -1

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open_reader(cls, config: Config) -> "Index":
        if not index_exists(config):
            raise NoIndexError(f"no index at {config.index_dir}")
        try:
            return cls(config, Manifest(config.index_dir / MANIFEST_NAME))
        except Exception as exc:
            raise StoreError(f"{config.index_dir / MANIFEST_NAME}: cannot open the index: {exc}") from None

    @classmethod
    def open_writer(cls, config: Config, role: str = "index", wait: float = 0.0) -> "Index":
        os.umask(0o077)  # the index holds the user's notes: owner-only files
        ensure_private_dir(config.data_dir)
        ensure_private_dir(config.index_dir)
        lock = WriteLock(config.index_dir / LOCK_NAME, role).acquire(wait=wait)
        try:
            index = cls(config, Manifest(config.index_dir / MANIFEST_NAME), lock)
            index.recover()
            return index
        except BaseException:
            lock.release()
            raise

    def close(self) -> None:
        self.manifest.close()
        if self.lock:
            self.lock.release()
            self.lock = None

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- vectors ----------------------------------------------------------------------------
    @property
    def vectors(self):
        """The Chroma store, opened on first use (and reopened when another process wrote)."""
        generation = self.manifest.generation()
        if self._vectors is None or (self.lock is None and generation != self._vectors_generation):
            self._vectors = self._open_vectors(fresh=self._vectors is not None)
            self._vectors_generation = generation
        return self._vectors

    def _open_vectors(self, fresh: bool = False):
        from .vectors import ChromaStore

        if self.config.chroma_url:
            return ChromaStore.remote(self.config.chroma_url, name=_remote_collection(self.config))
        if fresh:
            _forget_chroma_clients()
        return ChromaStore.persistent(self.dir / CHROMA_NAME)

    # -- fingerprint ------------------------------------------------------------------------
    def fingerprint(self) -> dict | None:
        return self.manifest.get_json("fingerprint")

    def check_fingerprint(self, wanted: dict, rebuild: bool = False) -> None:
        """Refuse to mix vectors of different models or chunkers; --rebuild starts over."""
        have = self.fingerprint()
        if have is None or rebuild or self.manifest.counts()[1] == 0:
            if rebuild and have is not None:
                self.wipe()
            self.manifest.set_json("fingerprint", wanted)
            return
        if have != wanted:
            raise IndexMismatchError(describe_mismatch(have, wanted))

    def wipe(self) -> None:
        self.manifest.set_meta("vectors_dirty", "1")
        self.vectors.reset()
        self.manifest.clear()
        self.manifest.set_meta("vectors_dirty", "0")

    # -- writing ----------------------------------------------------------------------------
    def write(self, updates: Sequence[FileUpdate], removals: Sequence[str] = ()) -> tuple[int, int]:
        """Apply file updates and removals; returns (chunks added, chunks removed)."""
        m = self.manifest
        new_vectors = {k: v for u in updates for k, v in u.vectors.items()}
        if new_vectors:
            m.cache_vectors(new_vectors.items())
        old_keys: dict[str, str] = {}  # chunk id -> vec_key, for the files being replaced
        for path in [u.record.path for u in updates] + list(removals):
            old_keys.update({cid: key for cid, _p, key in m.stored_chunks_of(path)})
        new_ids = {s.chunk.id for u in updates for s in u.chunks}
        # A chunk whose id survives but whose embedded text changed (a new title) is re-sent.
        to_add = [s for u in updates for s in u.chunks if old_keys.get(s.chunk.id) != s.vec_key]
        to_delete = sorted(old_keys.keys() - new_ids)
        m.set_meta("vectors_dirty", "1", commit=False)
        m.db.commit()
        if to_add:
            vecs = self._vectors_for([s.vec_key for s in to_add], new_vectors)
            self.vectors.upsert([s.chunk.id for s in to_add], vecs, [s.chunk.path for s in to_add])
        if to_delete:
            self.vectors.delete(to_delete)
        for u in updates:
            m.replace_file(u.record, u.chunks)
        for path in removals:
            m.remove_file(path)
        m.set_meta("vectors_dirty", "0", commit=False)
        m.commit_write()
        return len(to_add), len(to_delete)

    def _vectors_for(self, keys: Sequence[str], fresh: dict[str, np.ndarray]) -> np.ndarray:
        missing = [k for k in keys if k not in fresh]
        cached = self.manifest.cached_vectors(missing, self._dim()) if missing else {}
        return np.stack([fresh[k] if k in fresh else cached[k] for k in keys])

    def _dim(self) -> int:
        return int((self.fingerprint() or {}).get("dim", 0))

    # -- recovery ---------------------------------------------------------------------------
    def recover(self) -> None:
        """Bring Chroma back in step with the manifest after a run that was killed mid-write."""
        _remove_leftovers(self.dir)
        if self.manifest.get_meta("vectors_dirty", "0") != "1":
            return
        if not self.config.chroma_url and not vectors_open_in_child(self.dir / CHROMA_NAME):
            self._move_broken_chroma()
            self.rebuild_vectors()
            return
        self.sync_vectors()
        self.manifest.set_meta("vectors_dirty", "0")

    def _move_broken_chroma(self) -> None:
        """Set a store that does not open aside (only the latest one is kept, for a bug report)."""
        path = self.dir / CHROMA_NAME
        self._vectors = None
        _forget_chroma_clients()
        if path.exists():
            for old in self.dir.glob(f"{CHROMA_NAME}.broken-*"):
                shutil.rmtree(old, ignore_errors=True)
            shutil.move(str(path), str(self.dir / f"{CHROMA_NAME}.broken-{int(time.time())}"))

    def sync_vectors(self) -> tuple[int, int]:
        """Make Chroma hold exactly the manifest's chunks; returns (written, deleted)."""
        written, deleted, _lost = self._sync_into(self.vectors)
        return written, deleted

    def _sync_into(self, store) -> tuple[int, int, list[str]]:
        """Make ``store`` hold exactly the manifest's chunk ids, paths and cached vectors.

        A file with a chunk whose vector is not in the cache cannot be restored without
        embedding: it is forgotten (and its vectors dropped) so the next run indexes it again.
        Returns (vectors written, vectors deleted, forgotten paths).
        """
        m, dim = self.manifest, self._dim()
        lost = sorted(r[0] for r in m.db.execute(
            "SELECT DISTINCT c.path FROM chunks c LEFT JOIN vectors v ON v.key = c.vec_key"
            " WHERE v.key IS NULL OR length(v.vec) != ?", (dim * 4,)))
        for path in lost:
            m.remove_file(path)
        m.db.commit()
        want = {cid: (path, key) for cid, path, key in m.stored_chunks()}
        have: set[str] = set()
        wrong: list[str] = []  # present, but under another path or with another vector
        offset, page_size = 0, 2000
        while True:
            page = store.col.get(include=["metadatas", "embeddings"], limit=page_size, offset=offset)
            ids = page["ids"]
            offset += len(ids)
            metas = page["metadatas"] or [None] * len(ids)
            embeddings = page["embeddings"]
            keys = [want[c][1] for c in ids if c in want]
            cached = m.cached_vectors(keys, dim) if keys else {}
            for i, cid in enumerate(ids):
                have.add(cid)
                if cid not in want:
                    continue
                path, key = want[cid]
                vec = cached.get(key)
                same_path = (metas[i] or {}).get("path") == path
                same_vec = (vec is not None and embeddings is not None
                            and np.allclose(np.asarray(embeddings[i], dtype=np.float32), vec,
                                            rtol=1e-4, atol=1e-5))
                if not (same_path and same_vec):
                    wrong.append(cid)
            if len(ids) < page_size:
                break
        extra = sorted(have - want.keys())
        if extra:
            store.delete(extra)
        todo = [cid for cid in want if cid not in have] + wrong
        for start in range(0, len(todo), 2000):
            part = todo[start:start + 2000]
            cached = m.cached_vectors([want[c][1] for c in part], dim)
            store.upsert(part, np.stack([cached[want[c][1]] for c in part]), [want[c][0] for c in part])
        return len(todo), len(extra), lost

    def rebuild_vectors(self) -> list[str]:
        """Build Chroma afresh from the manifest's cache in a new folder, then swap it in.

        Until the swap the live store is untouched; ``vectors_dirty`` stays set throughout, so
        a crash at any point leaves something ``recover`` finishes. Returns the files
        forgotten because a vector was not cached (they need indexing again).
        """
        self.manifest.set_meta("vectors_dirty", "1")
        if self.config.chroma_url:
            self.vectors.reset()
            _written, _deleted, lost = self._sync_into(self.vectors)
        else:
            from .vectors import ChromaStore

            self._vectors = None
            _forget_chroma_clients()
            live = self.dir / CHROMA_NAME
            fresh = self.dir / f"{CHROMA_NAME}.new-{os.getpid()}"
            shutil.rmtree(fresh, ignore_errors=True)
            store = ChromaStore.persistent(fresh)
            _written, _deleted, lost = self._sync_into(store)
            del store
            _forget_chroma_clients()  # stops Chroma's system: its files are closed before the swap
            _swap_dirs(fresh, live)
            shutil.rmtree(fresh, ignore_errors=True)  # now the old store, if there was one
        self.manifest.set_meta("vectors_dirty", "0")
        return lost

    # -- reporting --------------------------------------------------------------------------
    def size_bytes(self) -> int:
        total = 0
        for root, _dirs, files in os.walk(self.dir):
            for name in files:
                try:
                    total += os.path.getsize(os.path.join(root, name))
                except OSError:
                    pass
        return total


def describe_mismatch(have: dict, wanted: dict) -> str:
    diffs = [f"{k}: index has {have.get(k)!r}, now {wanted.get(k)!r}"
             for k in sorted(set(have) | set(wanted)) if have.get(k) != wanted.get(k)]
    return "the index was built with different settings (" + "; ".join(diffs) + ")"


def _remote_collection(config: Config) -> str:
    import hashlib

    return "ragcli-" + hashlib.sha256(str(config.index_dir).encode()).hexdigest()[:12]


def _forget_chroma_clients() -> None:
    # Chroma caches one system per path; a reader must drop it to see another process's writes.
    try:
        from chromadb.api.client import SharedSystemClient

        SharedSystemClient.clear_system_cache()
    except Exception:
        pass


def _remove_leftovers(index_dir: Path) -> None:
    """Folders a rebuild killed half-way left behind (only called with the write lock held)."""
    for pattern in (f"{CHROMA_NAME}.new-*", f"{CHROMA_NAME}.old-*"):
        for path in index_dir.glob(pattern):
            shutil.rmtree(path, ignore_errors=True)


def _swap_dirs(fresh: Path, live: Path) -> None:
    """Put ``fresh`` at ``live``; the old ``live`` (if any) ends up at ``fresh``.

    One atomic renameat2(RENAME_EXCHANGE) on Linux; elsewhere three renames, and a crash
    between them leaves no store at ``live``, which recovery rebuilds from the cache.
    """
    if not live.exists():
        os.rename(fresh, live)
        return
    if _exchange(fresh, live):
        return
    old = live.with_name(f"{CHROMA_NAME}.old-{os.getpid()}")
    os.rename(live, old)
    os.rename(fresh, live)
    os.rename(old, fresh)


def _exchange(a: Path, b: Path) -> bool:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


_PROBE = """
import os, sys
os.environ["ANONYMIZED_TELEMETRY"] = "False"
import chromadb
from chromadb.config import Settings
c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
for col in c.list_collections():
    col = c.get_collection(col.name if hasattr(col, "name") else col)
    n = col.count()
    if n:
        got = col.get(limit=1, include=["embeddings"])
        col.query(query_embeddings=got["embeddings"][:1], n_results=min(3, n))
print("ok")
"""


def vectors_open_in_child(path: Path, timeout: float = 60.0) -> bool:
    """Does the Chroma store at ``path`` open and answer a query? Asked in a child process."""
    if not path.exists():
        return True
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0 and proc.stdout.strip().endswith("ok")

