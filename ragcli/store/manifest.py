"""The manifest: one SQLite file that is the index's source of truth.

It holds the files (path, size, mtime, content hash), their chunks (text and position),
an FTS5 keyword index over the chunks, and a cache of embeddings keyed by what was
embedded. Chroma holds only the vectors for search and can always be rebuilt from here
without re-embedding anything, which is what makes a killed run recoverable.

SQLite runs in WAL mode so readers (search, ask, chat) keep working while a writer commits.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..types import Chunk

SCHEMA_VERSION = 1
# "1" while some chunks may have no vector yet (phase one of a run wrote them, phase two has
# not embedded them all); cleared when a count finds none, so a search need not count.
PENDING_META = "vectors_pending"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    root TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '',      -- '|tag|other|' so LIKE '%|tag|%' matches whole tags
    date TEXT,                           -- ISO date from front matter, else NULL
    embeds TEXT NOT NULL DEFAULT '[]',   -- JSON list of paths this note embeds
    warnings TEXT NOT NULL DEFAULT '[]',
    indexed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    title TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT '',
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    page INTEGER,
    vec_key TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, heading, text, content='chunks', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, title, heading, text)
    VALUES (new.rowid, new.title || ' ' || new.aliases, new.heading, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, title, heading, text)
    VALUES ('delete', old.rowid, old.title || ' ' || old.aliases, old.heading, old.text);
END;
CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL);
-- Vectors that may no longer be used: those of deleted chunks.
-- Pruning checks only these, so an unchanged re-index of a large index costs no scan
-- (a full anti-join took 0.75 s of a 14k-note MDN re-index). Filled by the trigger in the
-- deleting transaction, so a run killed before its prune leaves the work for the next one.
CREATE INDEX IF NOT EXISTS chunks_vec_key ON chunks(vec_key);
CREATE TABLE IF NOT EXISTS unpruned (key TEXT PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS chunks_ad_unpruned AFTER DELETE ON chunks BEGIN
    INSERT OR IGNORE INTO unpruned(key) VALUES (old.vec_key);
END;
CREATE TABLE IF NOT EXISTS notes (      -- note-level evidence for retrieval
    path TEXT PRIMARY KEY,
    centroid BLOB NOT NULL               -- the mean of the note's chunk vectors (float32, unit length)
);
"""

# What the insert trigger puts in each FTS5 column (title carries the aliases, so the FTS5
# columns are not the chunk table's columns: FTS5's own 'rebuild' and 'integrity-check'
# against the content table would both get the title column wrong).
FTS_ROWS = "SELECT rowid, title || ' ' || aliases, heading, text FROM chunks"


@dataclass(frozen=True)
class FileRecord:
    path: str
    root: str
    size: int
    mtime_ns: int
    hash: str
    title: str = ""
    tags: tuple[str, ...] = ()
    date: str | None = None
    embeds: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    indexed_at: float = 0.0


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as the manifest holds it: the chunk plus the key of its cached vector."""

    chunk: Chunk
    vec_key: str
    aliases: str = ""


def vector_key(model_id: str, text: str) -> str:
    """Cache key of an embedding: the same text under the same model is embedded once."""
    return hashlib.sha256(f"{model_id}\n{text}".encode()).hexdigest()[:40]


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _private_file(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)


class Manifest:
    """Files, chunks, keyword index and vector cache in one SQLite database."""

    def __init__(self, path: Path):
        """Readers too: the schema is created (``IF NOT EXISTS``) by whoever opens it, so every
        table and trigger is there for every query below."""
        self.path = path
        self.db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        self.db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        self.db.commit()
        for suffix in ("", "-wal", "-shm"):
            _private_file(Path(f"{path}{suffix}"))
        self.db.execute("PRAGMA busy_timeout=30000")

    def close(self) -> None:
        self.db.close()

    # -- meta -------------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str, commit: bool = True) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        if commit:
            self.db.commit()

    def get_json(self, key: str, default=None):
        raw = self.get_meta(key)
        return json.loads(raw) if raw is not None else default

    def set_json(self, key: str, value) -> None:
        self.set_meta(key, json.dumps(value))

    def dim(self) -> int:
        """The dimension of the index's vectors, from its fingerprint (0 before the first write)."""
        return int((self.get_json("fingerprint") or {}).get("dim", 0))

    def generation(self) -> int:
        """A counter bumped on every committed write, so long-lived readers can notice."""
        return int(self.get_meta("generation", "0") or 0)

    # -- files ------------------------------------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        return {r[0]: _file_record(r) for r in self.db.execute(_FILES)}

    def paths(self) -> set[str]:
        """The paths of the indexed files (cheaper than ``files()`` when that is all)."""
        return {r[0] for r in self.db.execute("SELECT path FROM files")}

    def file(self, path: str) -> FileRecord | None:
        """The record of one indexed file (its path exactly as indexed), or None."""
        row = self.db.execute(_FILES + " WHERE path = ?", (path,)).fetchone()
        return _file_record(row) if row else None

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a file whose content hash did not change."""
        self.db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def dependents(self, paths: Iterable[str]) -> set[str]:
        """Notes that embed any of ``paths`` (their text includes the embedded note's)."""
        wanted = set(paths)
        if not wanted:
            return set()
        rows = self.db.execute("SELECT path, embeds FROM files WHERE embeds != '[]'")
        return {path for path, embeds in rows if wanted.intersection(json.loads(embeds))}

    # -- chunks -----------------------------------------------------------------------------
    def replace_file(self, record: FileRecord, chunks: Sequence[StoredChunk],
                     centroid: np.ndarray | None = None) -> None:
        """Swap a file's chunks (and its centroid) for new ones (inside the caller's transaction)."""
        self.db.execute("DELETE FROM chunks WHERE path = ?", (record.path,))
        self.db.execute("DELETE FROM notes WHERE path = ?", (record.path,))
        if centroid is not None:
            self.db.execute("INSERT INTO notes(path, centroid) VALUES (?, ?)",
                            (record.path, np.asarray(centroid, dtype=np.float32).tobytes()))
        self.db.executemany(
            "INSERT INTO chunks(id, path, ordinal, title, aliases, heading, text, line_start, line_end,"
            " page, vec_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(s.chunk.id, s.chunk.path, s.chunk.ordinal, s.chunk.title, s.aliases, s.chunk.heading,
              s.chunk.text, s.chunk.line_start, s.chunk.line_end, s.chunk.page, s.vec_key) for s in chunks])
        self.db.execute(
            "INSERT OR REPLACE INTO files(path, root, size, mtime_ns, hash, title, tags, date, embeds,"
            " warnings, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record.path, record.root, record.size, record.mtime_ns, record.hash, record.title,
             _tags_column(record.tags), record.date, json.dumps(list(record.embeds)),
             json.dumps(list(record.warnings)), record.indexed_at or time.time()))

    def remove_file(self, path: str) -> None:
        self.db.execute("DELETE FROM chunks WHERE path = ?", (path,))
        self.db.execute("DELETE FROM notes WHERE path = ?", (path,))
        self.db.execute("DELETE FROM files WHERE path = ?", (path,))

    def commit_write(self) -> None:
        """Commit a batch of file changes and bump the generation counter."""
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE"
            " SET value = CAST(value AS INTEGER) + 1")
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('last_indexed', ?)",
                        (str(time.time()),))
        self.db.commit()

    def chunks_by_ids(self, ids: Sequence[str]) -> dict[str, Chunk]:
        sql = _CHUNKS + " WHERE id IN"
        return {row[0]: Chunk(*row) for row in rows_in(self.db, sql, ids)}

    def section_chunks(self, path: str, heading: str) -> list[Chunk]:
        """The chunks of one note under ``heading`` or a heading above it, in order."""
        heads = [" > ".join(heading.split(" > ")[:k]) for k in range(1, heading.count(" > ") + 2)]
        sql = (_CHUNKS + f" WHERE path = ? AND heading IN ({','.join('?' * len(heads))}) ORDER BY ordinal")
        return [Chunk(*row) for row in self.db.execute(sql, (path, *heads))]

    def note_chunks(self, path: str) -> list[Chunk]:
        """Every chunk of one note, in order."""
        return [Chunk(*row) for row in self.db.execute(_CHUNKS + " WHERE path = ? ORDER BY ordinal", (path,))]

    def page_chunks(self, path: str, page: int) -> list[Chunk]:
        """The chunks of one page of a PDF, in order."""
        sql = _CHUNKS + " WHERE path = ? AND page = ? ORDER BY ordinal"
        return [Chunk(*row) for row in self.db.execute(sql, (path, page))]

    def stored_chunks(self, ids: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
        """(chunk id, path, vec_key) for the given ids, or for every chunk."""
        if ids is None:
            yield from self.db.execute("SELECT id, path, vec_key FROM chunks")
            return
        yield from rows_in(self.db, "SELECT id, path, vec_key FROM chunks WHERE id IN", ids)

    def chunk_ids_newest_first(self) -> list[str]:
        """Every chunk's id, the chunks of the most recently modified notes first."""
        return [row[0] for row in self.db.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.path = c.path ORDER BY f.mtime_ns DESC, c.path, c.ordinal")]

    def stored_chunks_of(self, path: str) -> list[tuple[str, str, str]]:
        return self.db.execute("SELECT id, path, vec_key FROM chunks WHERE path = ?", (path,)).fetchall()

    def counts(self) -> tuple[int, int]:
        """(files, chunks)"""
        files = self.db.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        chunks = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return files, chunks

    # -- vector cache -----------------------------------------------------------------------
    def cached_vectors(self, keys: Sequence[str], dim: int) -> dict[str, np.ndarray]:
        return cached_vectors(self.db, keys, dim)

    def cache_vectors(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items]
        self.db.executemany("INSERT OR REPLACE INTO vectors(key, vec) VALUES (?, ?)", rows)

    def prune_vectors(self) -> int:
        """Drop cached vectors no chunk uses: deleted notes' text must not linger. Only the
        candidates in ``unpruned`` are checked; an index from before that table is checked
        whole, once."""
        if self.get_meta("prune_tracked") != "1":
            cur = self.db.execute("DELETE FROM vectors WHERE NOT EXISTS "
                                  "(SELECT 1 FROM chunks WHERE chunks.vec_key = vectors.key)")
            self.set_meta("prune_tracked", "1", commit=False)
        else:
            cur = self.db.execute("DELETE FROM vectors WHERE key IN (SELECT key FROM unpruned) AND NOT EXISTS "
                                  "(SELECT 1 FROM chunks WHERE chunks.vec_key = vectors.key)")
        self.db.execute("DELETE FROM unpruned")
        return cur.rowcount

    def pending_vectors(self, limit: int, after: int = 0) -> list[tuple[str, str, int]]:
        """(vec_key, chunk id, rowid) of up to ``limit`` chunks past rowid ``after`` whose vector is
        not cached, one per key, in chunk order: a walk that stops at ``limit``, not a scan of all."""
        return self.db.execute(
            "SELECT vec_key, min(id), min(rowid) FROM (SELECT c.vec_key, c.id, c.rowid FROM chunks c"
            " LEFT JOIN vectors v ON v.key = c.vec_key WHERE c.rowid > ? AND (v.key IS NULL OR"
            " length(v.vec) != ?) ORDER BY c.rowid LIMIT ?) GROUP BY vec_key ORDER BY min(rowid)",
            (after, self.dim() * 4, limit)).fetchall()

    def pending_counts(self) -> tuple[int, int]:
        """(chunks whose vector is not cached, all chunks): phase two's progress. Cheap when
        none wait (the mark says so); a count over the chunks when some do."""
        total = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        if self.get_meta(PENDING_META) != "1":
            return 0, total
        pending = self.db.execute("SELECT COUNT(*) FROM chunks c LEFT JOIN vectors v ON v.key = c.vec_key"
                                  " WHERE v.key IS NULL OR length(v.vec) != ?", (self.dim() * 4,)).fetchone()[0]
        return pending, total

    def chunks_with_keys(self, keys: Sequence[str]) -> list[tuple[str, str, str]]:
        """(chunk id, path, vec_key) of every chunk whose vector is one of ``keys``."""
        return list(rows_in(self.db, "SELECT id, path, vec_key FROM chunks WHERE vec_key IN", keys))

    def paths_with_uncached_vectors(self, dim: int) -> list[str]:
        """Files with a chunk whose vector is missing from the cache (or has another size)."""
        return sorted(r[0] for r in self.db.execute(
            "SELECT DISTINCT c.path FROM chunks c LEFT JOIN vectors v ON v.key = c.vec_key"
            " WHERE v.key IS NULL OR length(v.vec) != ?", (dim * 4,)))

    def rebuild_keywords(self) -> None:
        """Index every chunk row again, the way the insert trigger does."""
        self.db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
        self.db.execute(f"INSERT INTO chunks_fts(rowid, title, heading, text) {FTS_ROWS}")
        self.db.commit()

    def drop_orphan_chunks(self) -> int:
        """Chunk rows of files the manifest does not list; returns how many were dropped."""
        self.db.execute("DELETE FROM notes WHERE path NOT IN (SELECT path FROM files)")
        cur = self.db.execute("DELETE FROM chunks WHERE path NOT IN (SELECT path FROM files)")
        self.db.commit()
        return cur.rowcount

    def clear(self) -> None:
        """Forget every file and chunk (for --rebuild); keeps the vector cache."""
        self.db.execute("DELETE FROM chunks")
        self.db.execute("DELETE FROM files")
        self.db.execute("DELETE FROM notes")
        self.db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")  # no rows left
        self.db.commit()


_FILES = "SELECT path, root, size, mtime_ns, hash, title, tags, date, embeds, warnings, indexed_at FROM files"


def _tags_column(tags: Iterable[str]) -> str:
    tags = [t.lower().lstrip("#") for t in tags if t]
    return ("|" + "|".join(sorted(set(tags))) + "|") if tags else ""


def _file_record(row) -> FileRecord:
    return FileRecord(path=row[0], root=row[1], size=row[2], mtime_ns=row[3], hash=row[4],
                      title=row[5], tags=tuple(t for t in row[6].split("|") if t), date=row[7],
                      embeds=tuple(json.loads(row[8])), warnings=tuple(json.loads(row[9])),
                      indexed_at=row[10])


# a Chunk's fields, in their order: Chunk(*row)
_CHUNKS = "SELECT id, path, title, heading, text, line_start, line_end, page, ordinal FROM chunks"


def cached_vectors(db: sqlite3.Connection, keys: Sequence[str], dim: int) -> dict[str, np.ndarray]:
    """key -> cached vector, for the ``keys`` cached with ``dim`` dimensions (``store.check``
    reads a manifest it does not open as a ``Manifest``)."""
    result: dict[str, np.ndarray] = {}
    for key, blob in rows_in(db, "SELECT key, vec FROM vectors WHERE key IN", keys):
        vec = np.frombuffer(blob, dtype=np.float32)
        if vec.shape[0] == dim:
            result[key] = vec
    return result


def rows_in(db: sqlite3.Connection, sql: str, values: Sequence) -> Iterator[tuple]:
    """The rows of ``sql`` (ending in ``IN``) for ``values``, asked 500 at a time: SQLite
    limits the variables of one statement."""
    for start in range(0, len(values), 500):
        part = list(values[start:start + 500])
        yield from db.execute(f"{sql} ({','.join('?' * len(part))})", part)
