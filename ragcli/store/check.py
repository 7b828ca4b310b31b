"""The index's own consistency, for `rag verify`: the store inspects itself and reports.

What is checked, from the cheapest to the riskiest:
- the manifest: SQLite ``quick_check``, an interrupted write (``vectors_dirty``), the
  fingerprint, chunk rows of files it no longer lists, chunks whose vector is not cached;
- the keyword index: FTS5 ``integrity-check`` plus its rows against the chunk rows;
- the vector store: first that it opens and answers a query *in a child process* (a damaged
  native index can kill the process rather than raise), then, in this process, that its ids,
  paths and vectors are exactly the manifest's chunks and cached vectors. On a Chroma server
  there is no folder to probe: the index's collection is compared the same way, and a server
  that cannot be reached is an error (nothing can be checked), not a finding.

Nothing here changes the index: the manifest is opened read-write only because FTS5's
integrity-check is an INSERT, and nothing is ever committed.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass

from ..closing import Closing
from ..config import Config
from ..errors import StoreError
from .manifest import FTS_ROWS
from .notes import CENTROIDS_META
from .paths import CHROMA_NAME, MANIFEST_NAME
from .recovery import forget_chroma_clients, vectors_open_in_child
from .remote import describe, remote_collection
from .sync import differences

# Problem kinds, and which part of the index each one concerns.
MANIFEST_CORRUPT = "manifest-corrupt"  # SQLite says the manifest file is damaged
INTERRUPTED = "interrupted-write"  # a writer died between Chroma and the manifest commit
NO_FINGERPRINT = "no-fingerprint"  # chunks but no record of the model that made them
ORPHAN_CHUNKS = "orphan-chunks"  # chunk rows of a path the manifest does not list
CACHE_MISSING = "vector-cache-missing"  # a chunk whose cached vector has another size
KEYWORD_INDEX = "keyword-index"  # FTS5 rows differ from the chunk rows, or FTS5 is damaged
STORE_MISSING = "vector-store-missing"
STORE_BROKEN = "vector-store-broken"  # does not open or answer a query
VECTORS_MISSING = "vectors-missing"  # manifest chunk ids absent from Chroma
VECTORS_EXTRA = "vectors-extra"  # Chroma ids the manifest does not have
VECTORS_PATH = "vector-path"  # a Chroma id filed under another path
VECTORS_STALE = "vector-stale"  # a Chroma vector differs from the cached one
COUNTS = "counts"
CENTROID_MISSING = "note-centroid-missing"  # a note with chunks and no centroid (derived from the cache)

# Problems that rebuilding the vector store from the manifest's cache fixes.
VECTOR_KINDS = frozenset({INTERRUPTED, STORE_MISSING, STORE_BROKEN, VECTORS_MISSING, VECTORS_EXTRA,
                          VECTORS_PATH, VECTORS_STALE, COUNTS, ORPHAN_CHUNKS, CACHE_MISSING})


@dataclass(frozen=True)
class Problem:
    kind: str
    path: str  # the file concerned, or "" for the index as a whole
    detail: str


class Inspection(Closing):
    """A read-only look at one index folder. ``problems`` fills as checks run."""

    def __init__(self, config: Config):
        self.config = config
        self.problems: list[Problem] = []
        self.vectors = 0  # vectors seen in the store
        self.db = _open_manifest(config, self.problems)
        self._chunks: dict[str, tuple[str, str]] | None = None

    @property
    def readable(self) -> bool:
        return self.db is not None

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    # -- what the manifest says ---------------------------------------------------------
    def generation(self) -> str | None:
        return _meta(self.db, "generation")

    def interrupted(self) -> bool:
        return _meta(self.db, "vectors_dirty") == "1"

    def files(self) -> dict[str, str]:
        """Indexed path -> recorded sha256."""
        return dict(self.db.execute("SELECT path, hash FROM files"))

    def chunks(self) -> dict[str, tuple[str, str]]:
        """Chunk id -> (path, vector cache key)."""
        if self._chunks is None:
            self._chunks = {cid: (path, key) for cid, path, key
                            in self.db.execute("SELECT id, path, vec_key FROM chunks")}
        return self._chunks

    def dim(self) -> int:
        return int((_json_meta(self.db, "fingerprint") or {}).get("dim") or 0)

    def pending(self) -> int:
        """Chunks written without a vector yet (phase two of a run embeds them): not damage."""
        return self.db.execute("SELECT count(*) FROM chunks c LEFT JOIN vectors v ON v.key = c.vec_key"
                               " WHERE v.key IS NULL").fetchone()[0]

    def vectored_chunks(self) -> dict[str, tuple[str, str]]:
        """``chunks()`` less those waiting for a vector: what the vector store must hold."""
        cached = {k for (k,) in self.db.execute("SELECT key FROM vectors")}
        return {cid: row for cid, row in self.chunks().items() if row[1] in cached}

    # -- checks -------------------------------------------------------------------------
    def check_manifest(self, own_lock: bool) -> None:
        if self.interrupted() and own_lock:
            self.problems.append(Problem(INTERRUPTED, "", "a write was interrupted: Chroma may be "
                                         "ahead of the manifest"))
        if self.chunks() and not self.dim():
            self.problems.append(Problem(NO_FINGERPRINT, "", "chunks are indexed but the embedding "
                                         "model that made them is not recorded"))
        _check_chunk_rows(self.db, self.dim(), self.problems)

    def check_keywords(self) -> None:
        _check_keywords(self.db, self.problems)

    def check_vectors(self) -> None:
        self.vectors = _check_vectors(self.config, self.vectored_chunks(), self.db, self.dim(), self.problems)


def _open_manifest(config: Config, problems: list[Problem]) -> sqlite3.Connection | None:
    path = config.index_dir / MANIFEST_NAME
    try:
        # read-write (FTS5 integrity-check is an INSERT), but nothing is ever committed
        db = sqlite3.connect(path, timeout=30)
        db.execute("PRAGMA busy_timeout=30000")
        rows = [r[0] for r in db.execute("PRAGMA quick_check(20)")]
        if rows != ["ok"]:
            db.close()
            problems.append(Problem(MANIFEST_CORRUPT, str(path), "; ".join(map(str, rows))[:500]))
            return None
        db.execute("SELECT count(*) FROM files").fetchone()
        db.execute("SELECT count(*) FROM chunks").fetchone()
        return db
    except sqlite3.DatabaseError as exc:
        problems.append(Problem(MANIFEST_CORRUPT, str(path), str(exc)))
        return None


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _json_meta(db: sqlite3.Connection, key: str):
    raw = _meta(db, key)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _check_chunk_rows(db: sqlite3.Connection, dim: int, problems: list[Problem]) -> None:
    for path, n in db.execute("SELECT path, count(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)"
                              " GROUP BY path ORDER BY path"):
        problems.append(Problem(ORPHAN_CHUNKS, path, f"{n} chunk(s) of a file the index does not list"))
    if not dim:
        return
    # A vector cached under another size is damage (the file must be embedded again); a chunk
    # with none is one that phase one wrote and phase two has not embedded yet: a state, counted
    # in ``Inspection.pending``, that the next run (or the watcher) finishes.
    rows = db.execute("SELECT c.path, count(*) FROM chunks c JOIN vectors v ON v.key = c.vec_key"
                      " WHERE length(v.vec) != ? GROUP BY c.path ORDER BY c.path", (dim * 4,))
    for path, n in rows:
        problems.append(Problem(CACHE_MISSING, path, f"{n} chunk(s) have a cached vector of another size "
                                "(the file must be embedded again)"))
    if not db.execute("SELECT 1 FROM meta WHERE key = ? AND value = '1'", (CENTROIDS_META,)).fetchone():
        return  # built before notes had centroids: its next writer fills them from the cache
    rows = db.execute("SELECT DISTINCT c.path FROM chunks c LEFT JOIN notes n ON n.path = c.path"
                      " WHERE (n.path IS NULL OR length(n.centroid) != ?) AND NOT EXISTS (SELECT 1 FROM"
                      " chunks w LEFT JOIN vectors v ON v.key = w.vec_key WHERE w.path = c.path AND v.key IS NULL)"
                      " ORDER BY c.path", (dim * 4,))
    for (path,) in rows:
        problems.append(Problem(CENTROID_MISSING, path, "the note's centroid is missing "
                                "(--repair computes it again from the cached vectors)"))


def _check_keywords(db: sqlite3.Connection, problems: list[Problem]) -> None:
    try:  # the index's own structure
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as exc:
        problems.append(Problem(KEYWORD_INDEX, "", f"FTS5 integrity-check failed: {exc}"))
        return
    finally:
        db.rollback()
    try:
        differing = _fts_rows_differing(db)
    except sqlite3.DatabaseError as exc:
        problems.append(Problem(KEYWORD_INDEX, "", f"cannot read the keyword index: {exc}"))
        return
    chunk_rows = dict(db.execute("SELECT rowid, path FROM chunks"))
    # each row's entry in the document-size table, which ranking (bm25) reads
    with contextlib.suppress(sqlite3.DatabaseError):
        sized = {r[0] for r in db.execute("SELECT id FROM chunks_fts_docsize")}
        differing |= sized ^ chunk_rows.keys()
    by_path = Counter(chunk_rows[rowid] for rowid in differing if rowid in chunk_rows)
    stale = sum(rowid not in chunk_rows for rowid in differing)
    for path, n in sorted(by_path.items()):
        problems.append(Problem(KEYWORD_INDEX, path, f"{n} chunk(s) missing from the keyword index "
                                       "or indexed with other text"))
    if stale:
        problems.append(Problem(KEYWORD_INDEX, "", f"{stale} keyword row(s) of chunks that no longer exist"))


def _fts_rows_differing(db: sqlite3.Connection) -> set[int]:
    """Rowids whose tokens in the FTS5 index differ from the chunk rows' (every token, every
    position): the chunk rows are indexed again into a temporary FTS5 table with the same
    tokenizer, and the two are compared through fts5vocab 'instance' tables."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    tokenize = re.search(r"tokenize\s*=\s*'([^']*)'", sql)
    option = f", tokenize='{tokenize.group(1)}'" if tokenize else ""
    db.execute("PRAGMA temp_store = MEMORY")
    try:
        db.execute(f"CREATE VIRTUAL TABLE temp.verify_fts USING fts5(title, heading, text{option})")
        db.execute(f"INSERT INTO temp.verify_fts(rowid, title, heading, text) {FTS_ROWS}")
        db.execute("CREATE VIRTUAL TABLE temp.verify_have USING fts5vocab(main, chunks_fts, instance)")
        db.execute("CREATE VIRTUAL TABLE temp.verify_want USING fts5vocab(temp, verify_fts, instance)")
        rows = db.execute("SELECT DISTINCT doc FROM (SELECT * FROM temp.verify_have EXCEPT SELECT * FROM"
                          " temp.verify_want) UNION SELECT DISTINCT doc FROM (SELECT * FROM temp.verify_want"
                          " EXCEPT SELECT * FROM temp.verify_have)")
        return {r[0] for r in rows}
    finally:
        for name in ("verify_have", "verify_want", "verify_fts"):
            db.execute(f"DROP TABLE IF EXISTS temp.{name}")
        db.rollback()


def _check_vectors(config: Config, chunks: dict[str, tuple[str, str]], db: sqlite3.Connection, dim: int,
                   problems: list[Problem]) -> int:
    """Compare the vector store with the manifest; returns how many vectors it holds."""
    from .vectors import ChromaStore

    path = config.index_dir / CHROMA_NAME
    if config.chroma_url:
        collection = remote_collection(lambda key: _meta(db, key))
        where = describe(config.chroma_url, collection)
    else:
        where = str(path)
        if not path.exists():
            if chunks:
                problems.append(Problem(STORE_MISSING, str(path), f"{len(chunks)} chunks but no vector store"))
            return 0
        if not vectors_open_in_child(path):
            problems.append(Problem(STORE_BROKEN, str(path), "the vector store does not open or "
                                           "answer a query (checked in a child process)"))
            return 0
    try:
        if config.chroma_url:
            store = ChromaStore.remote(config.chroma_url, name=collection)
        else:
            store = ChromaStore.persistent(path)
        return _compare_vectors(store, chunks, db, dim, problems)
    except Exception as exc:  # any failure of the store is a finding, not a crash
        if isinstance(exc, StoreError) and config.chroma_url:
            raise  # except a server that does not answer: then nothing could be checked
        problems.append(Problem(STORE_BROKEN, where, f"{type(exc).__name__}: {exc}"[:300]))
        return 0
    finally:
        forget_chroma_clients()


def _compare_vectors(store, chunks: dict[str, tuple[str, str]], db: sqlite3.Connection, dim: int,
                     problems: list[Problem]) -> int:
    found = differences(store, chunks, db, dim)

    def per_path(ids) -> Counter:
        return Counter(chunks[cid][0] for cid in ids)

    for kind, counts, what in (
            (VECTORS_MISSING, per_path(found.missing(chunks)), "chunk(s) have no vector in the store"),
            (VECTORS_EXTRA, Counter(found.extra.values()), "vector(s) of chunks the manifest does not have"),
            (VECTORS_PATH, per_path(found.moved), "vector(s) filed under another path"),
            (VECTORS_STALE, per_path(found.stale), "vector(s) differ from the cached embedding")):
        problems += [Problem(kind, path, f"{n} {what}") for path, n in sorted(counts.items())]
    count = store.count()
    if count != len(chunks) or count != len(found.seen):
        problems.append(Problem(COUNTS, "", f"manifest has {len(chunks)} chunks, the vector store "
                                       f"counts {count} (and lists {len(found.seen)})"))
    return len(found.seen)
