"""Evidence passages' vectors kept on disk beside the index, so a question rarely embeds.

Embedding the candidate passages (sentences, blocks, section headings) is most of the time
to a question's first quote (bench/ISSUE19.md, "First quote"). The Searcher keeps them in
memory between questions; this file keeps them between processes: a one-off ``rag ask``
finds what an earlier ask, chat or watcher already embedded.

It is a cache and never the truth, so it can never make an answer wrong:
- a row is keyed by a hash of the passage's exact text, so an edited note's passages are
  new keys (the old rows are simply not asked for again, and age out);
- the embedder (model id, dimension, pooling and prefixes) is part of every key, so a row of
  another embedder is never read; a file opened by another embedder is emptied first;
- SQLite (WAL) leaves a killed writer's file sound; a file that is not a sound database
  (torn, overwritten) is deleted and started anew, and any other failure (locked, read-only,
  disk full) only means embedding as if nothing were cached.
Rows are kept first in, first out, at most ``max_rows`` (1.5 kB each at 384 dims).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .manifest import cached_vectors

PASSAGES_NAME = "passages.sqlite"
MAX_ROWS = 60_000  # ~95 MB at 384 dims; a question adds ~50 new rows, so ~1,200 questions' worth
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL);
"""


def passage_key(identity: str, text: str) -> bytes:
    """The row of ``text`` as embedded by ``identity``: the embedder is part of the key, so a
    process of another embedder writing into the same file is never read as this one's."""
    data = f"{identity}\0{text}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


def embedder_identity(embedder) -> dict:
    """What makes one embedder's vectors differ from another's (part of every key)."""
    return {"model": embedder.model_id, "dim": int(embedder.dim), "settings": embedder.settings}


def open_passages(index_dir: Path, embedder) -> "PassageCache":
    """The passage cache beside an index, for this embedder."""
    return PassageCache(index_dir / PASSAGES_NAME, embedder_identity(embedder))


class PassageCache:
    """Vectors of passages by their text, for one embedder (``identity``), in ``path``."""

    def __init__(self, path: Path, identity: dict, max_rows: int = MAX_ROWS):
        self.path = path
        self.identity = json.dumps(identity, sort_keys=True)
        self.max_rows = max_rows
        self.db: sqlite3.Connection | None = None
        self._open(retry=True)

    def close(self) -> None:
        db, self.db = self.db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def get(self, texts: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        """The cached vectors among ``texts``, by text."""
        keys = {passage_key(self.identity, t): t for t in dict.fromkeys(texts)}
        # a row of another size is not this embedder's: not used
        found = self._run(lambda db: cached_vectors(db, list(keys), dim)) or {}
        return {keys[bytes(key)]: vec for key, vec in found.items()}

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Remember ``vectors`` (text -> vector), the oldest rows let go past ``max_rows``."""
        if not vectors:
            return
        rows = [(passage_key(self.identity, t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in vectors.items()]

        def write(db: sqlite3.Connection) -> None:
            with db:
                db.executemany("INSERT OR IGNORE INTO vectors(key, vec) VALUES (?, ?)", rows)
                # rowids only grow, so the newest max_rows rows stand at the top
                db.execute("DELETE FROM vectors WHERE rowid <= (SELECT max(rowid) FROM vectors) - ?",
                           (self.max_rows,))
        self._run(write)

    def vectors(self, texts: Sequence[str], embedder) -> tuple[dict[str, np.ndarray], list[str]]:
        """Vectors of ``texts`` (distinct) by text: the cached ones read, the rest embedded by
        ``embedder`` and written here; and the texts that had to be embedded."""
        found = self.get(texts, int(embedder.dim))
        missing = [t for t in texts if t not in found]
        if missing:
            made = dict(zip(missing, embedder.embed(missing)))
            self.put(made)
            found.update(made)
        return found, missing

    # -- keeping the file sound -------------------------------------------------------------
    def _open(self, retry: bool) -> None:
        try:
            db = sqlite3.connect(self.path, timeout=1.0, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
                self._adopt(db)
            except BaseException:
                db.close()
                raise
        except sqlite3.OperationalError:  # locked, read-only, no space: go without the cache
            return
        except sqlite3.DatabaseError:  # not a database (torn, overwritten): start anew, once
            if retry:
                self._delete()
                self._open(retry=False)
            return
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.chmod(f"{self.path}{suffix}", 0o600)  # vectors say something of the notes
        self.db = db

    def _adopt(self, db: sqlite3.Connection) -> None:
        """Drop every row when another embedder made them (they would never be read), and
        record this one."""
        row = db.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        if row is not None and row[0] == self.identity:
            return
        with db:
            db.execute("DELETE FROM vectors")
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('embedder', ?)", (self.identity,))

    def _run(self, work):
        """``work(db)``, or None when the cache cannot serve: a busy or read-only file is
        skipped this time; a damaged one is started anew for the next call."""
        if self.db is None:
            return None
        try:
            return work(self.db)
        except sqlite3.OperationalError:
            return None
        except sqlite3.DatabaseError:
            self.close()
            self._delete()
            self._open(retry=False)
            return None

    def _delete(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")
