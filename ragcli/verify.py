"""`rag verify`: an fsck for the index, and ``--repair`` to make it consistent again.

What is checked, from the cheapest to the riskiest:
- the manifest: SQLite ``quick_check``, an interrupted write (``vectors_dirty``), the
  fingerprint, chunk rows of files it no longer lists, chunks whose vector is not cached;
- the files: each indexed file still exists, is a regular file and has its recorded hash;
- the keyword index: FTS5 ``integrity-check`` plus its rows against the chunk rows;
- the vector store: first that it opens and answers a query *in a child process* (a damaged
  native index can kill the process rather than raise), then, in this process, that its ids,
  paths and vectors are exactly the manifest's chunks and cached vectors.

Repair never edits anything by hand: it uses the same machinery as indexing. An interrupted
write is recovered; the keyword index is rebuilt from the chunk rows; Chroma is rebuilt from
the manifest's vector cache in a fresh folder and swapped in; missing files are removed;
changed files (and files whose vectors cannot be restored) are re-indexed with
``Indexer.run(scope=...)``. Then everything is checked again.

Stage functions here never print; ``ragcli.commands.verify`` renders the report.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .config import Config
from .errors import LockedError, NoIndexError
from .store import CHROMA_NAME, LOCK_NAME, MANIFEST_NAME, index_exists, vectors_open_in_child
from .store.lock import WriteLock

ProgressFn = Callable[[str], None]

# Problem kinds, and which part of the index each one concerns.
MANIFEST_CORRUPT = "manifest-corrupt"  # SQLite says the manifest file is damaged
INTERRUPTED = "interrupted-write"  # a writer died between Chroma and the manifest commit
NO_FINGERPRINT = "no-fingerprint"  # chunks but no record of the model that made them
FILE_MISSING = "file-missing"  # an indexed file is gone (or is no longer a regular file)
FILE_CHANGED = "file-changed"  # its bytes differ from the recorded hash
FILE_UNREADABLE = "file-unreadable"
ORPHAN_CHUNKS = "orphan-chunks"  # chunk rows of a path the manifest does not list
CACHE_MISSING = "vector-cache-missing"  # a chunk whose vector is not in the cache
KEYWORD_INDEX = "keyword-index"  # FTS5 rows differ from the chunk rows, or FTS5 is damaged
STORE_MISSING = "vector-store-missing"
STORE_BROKEN = "vector-store-broken"  # does not open or answer a query
VECTORS_MISSING = "vectors-missing"  # manifest chunk ids absent from Chroma
VECTORS_EXTRA = "vectors-extra"  # Chroma ids the manifest does not have
VECTORS_PATH = "vector-path"  # a Chroma id filed under another path
VECTORS_STALE = "vector-stale"  # a Chroma vector differs from the cached one
COUNTS = "counts"

VECTOR_KINDS = frozenset({INTERRUPTED, STORE_MISSING, STORE_BROKEN, VECTORS_MISSING, VECTORS_EXTRA,
                          VECTORS_PATH, VECTORS_STALE, COUNTS, ORPHAN_CHUNKS, CACHE_MISSING})
_PAGE = 2000


@dataclass(frozen=True)
class Problem:
    kind: str
    path: str  # the file concerned, or "" for the index as a whole
    detail: str


@dataclass
class VerifyReport:
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    chunks: int = 0
    vectors: int = 0
    repaired: list[str] = field(default_factory=list)  # what --repair did, in words
    writer_active: bool = False  # another process held the write lock while we looked

    @property
    def ok(self) -> bool:
        return not self.problems

    def kinds(self) -> set[str]:
        return {p.kind for p in self.problems}

    def as_dict(self) -> dict:
        data = {"ok": self.ok, "problems": [asdict(p) for p in self.problems],
                "files": self.files, "chunks": self.chunks, "vectors": self.vectors}
        if self.repaired:
            data["repaired"] = self.repaired
        if self.writer_active:
            data["writer_active"] = True
        return data


# ---------------------------------------------------------------------------------- checking


def verify(config: Config, progress: ProgressFn | None = None, attempts: int = 5) -> VerifyReport:
    """Check the index against the disk and against itself; never changes anything.

    It takes the write lock when it can, so no writer starts half-way through. When another
    process (the watcher) holds it, the manifest and Chroma are read as they are; a result
    seen while that writer was mid-write is checked again, ``attempts`` times at most.
    """
    if not index_exists(config):
        raise NoIndexError(f"no index at {config.index_dir}")
    lock = WriteLock(config.index_dir / LOCK_NAME, "verify")
    try:
        lock.acquire(wait=0.0)
    except LockedError:
        lock = None
    try:
        report = VerifyReport()
        for attempt in range(attempts if lock is None else 1):
            report = VerifyReport(writer_active=lock is None)
            steady = _check(config, report, progress, own_lock=lock is not None)
            if steady or not report.problems:
                break
            time.sleep(1.0 + attempt)
        return report
    finally:
        if lock is not None:
            lock.release()


def _check(config: Config, report: VerifyReport, progress: ProgressFn | None, own_lock: bool) -> bool:
    """Fill ``report``; False when a writer changed the index while we looked."""
    say = progress or (lambda _msg: None)
    db = _open_manifest(config, report)
    if db is None:
        return True
    try:
        generation_before = _meta(db, "generation")
        dirty = _meta(db, "vectors_dirty") == "1"
        if dirty and own_lock:
            report.problems.append(Problem(INTERRUPTED, "", "a write was interrupted: Chroma may be "
                                           "ahead of the manifest"))
        files = {path: (h, root) for path, h, root in db.execute("SELECT path, hash, root FROM files")}
        chunks = {cid: (path, key) for cid, path, key in db.execute("SELECT id, path, vec_key FROM chunks")}
        report.files, report.chunks = len(files), len(chunks)
        fingerprint = _json_meta(db, "fingerprint") or {}
        dim = int(fingerprint.get("dim") or 0)
        if chunks and not dim:
            report.problems.append(Problem(NO_FINGERPRINT, "", "chunks are indexed but the embedding "
                                           "model that made them is not recorded"))
        say(f"checking {len(files)} files")
        _check_files(files, report)
        _check_chunk_rows(db, files, dim, report)
        say("checking the keyword index")
        _check_keywords(db, report)
        say("checking the vector store")
        _check_vectors(config, chunks, db, dim, report)
        generation_after = _meta(db, "generation")
        steady = own_lock or (not dirty and _meta(db, "vectors_dirty") != "1"
                              and generation_before == generation_after)
        return steady
    finally:
        db.close()


def _open_manifest(config: Config, report: VerifyReport) -> sqlite3.Connection | None:
    path = config.index_dir / MANIFEST_NAME
    try:
        # read-write (FTS5 integrity-check is an INSERT), but nothing is ever committed
        db = sqlite3.connect(path, timeout=30)
        db.execute("PRAGMA busy_timeout=30000")
        rows = [r[0] for r in db.execute("PRAGMA quick_check(20)")]
        if rows != ["ok"]:
            db.close()
            report.problems.append(Problem(MANIFEST_CORRUPT, str(path), "; ".join(map(str, rows))[:500]))
            return None
        db.execute("SELECT count(*) FROM files").fetchone()
        db.execute("SELECT count(*) FROM chunks").fetchone()
        return db
    except sqlite3.DatabaseError as exc:
        report.problems.append(Problem(MANIFEST_CORRUPT, str(path), str(exc)))
        return None


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _json_meta(db: sqlite3.Connection, key: str):
    import json

    raw = _meta(db, key)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _check_files(files: dict[str, tuple[str, str]], report: VerifyReport) -> None:
    for path, (recorded, _root) in sorted(files.items()):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            report.problems.append(Problem(FILE_MISSING, path, "indexed, but no longer on disk"))
            continue
        except OSError as exc:
            report.problems.append(Problem(FILE_UNREADABLE, path, f"cannot stat: {exc.strerror or exc}"))
            continue
        if not stat.S_ISREG(st.st_mode):
            report.problems.append(Problem(FILE_MISSING, path, "indexed, but no longer a regular file"))
            continue
        try:
            digest = file_hash(Path(path))
        except OSError as exc:
            report.problems.append(Problem(FILE_UNREADABLE, path, f"cannot read: {exc.strerror or exc}"))
            continue
        if digest != recorded:
            report.problems.append(Problem(FILE_CHANGED, path, "content differs from what was indexed"))


def file_hash(path: Path) -> str:
    """sha256 of a regular file's bytes, read in blocks; never blocks on a FIFO."""
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_chunk_rows(db: sqlite3.Connection, files: dict, dim: int, report: VerifyReport) -> None:
    for path, n in db.execute("SELECT path, count(*) FROM chunks WHERE path NOT IN (SELECT path FROM files)"
                              " GROUP BY path ORDER BY path"):
        report.problems.append(Problem(ORPHAN_CHUNKS, path, f"{n} chunk(s) of a file the index does not list"))
    if not dim:
        return
    rows = db.execute("SELECT c.path, count(*) FROM chunks c LEFT JOIN vectors v ON v.key = c.vec_key"
                      " WHERE v.key IS NULL OR length(v.vec) != ? GROUP BY c.path ORDER BY c.path", (dim * 4,))
    for path, n in rows:
        report.problems.append(Problem(CACHE_MISSING, path, f"{n} chunk(s) have no cached vector "
                                       "(the file must be embedded again)"))


# What the manifest's insert trigger puts in each FTS5 column (title carries the aliases, so
# the FTS5 columns are not the chunk table's columns: FTS5's own 'rebuild' and
# 'integrity-check' against the content table would both get the title column wrong).
FTS_ROWS = "SELECT rowid, title || ' ' || aliases, heading, text FROM chunks"


def _check_keywords(db: sqlite3.Connection, report: VerifyReport) -> None:
    try:  # the index's own structure
        db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError as exc:
        report.problems.append(Problem(KEYWORD_INDEX, "", f"FTS5 integrity-check failed: {exc}"))
        return
    finally:
        db.rollback()
    try:
        differing = _fts_rows_differing(db)
    except sqlite3.DatabaseError as exc:
        report.problems.append(Problem(KEYWORD_INDEX, "", f"cannot read the keyword index: {exc}"))
        return
    chunk_rows = dict(db.execute("SELECT rowid, path FROM chunks"))
    try:  # each row's entry in the document-size table, which ranking (bm25) reads
        sized = {r[0] for r in db.execute("SELECT id FROM chunks_fts_docsize")}
        differing |= sized ^ chunk_rows.keys()
    except sqlite3.DatabaseError:
        pass
    by_path: dict[str, int] = {}
    stale = 0
    for rowid in differing:
        if rowid in chunk_rows:
            by_path[chunk_rows[rowid]] = by_path.get(chunk_rows[rowid], 0) + 1
        else:
            stale += 1
    for path, n in sorted(by_path.items()):
        report.problems.append(Problem(KEYWORD_INDEX, path, f"{n} chunk(s) missing from the keyword index "
                                       "or indexed with other text"))
    if stale:
        report.problems.append(Problem(KEYWORD_INDEX, "", f"{stale} keyword row(s) of chunks that no longer exist"))


def _fts_rows_differing(db: sqlite3.Connection) -> set[int]:
    """Rowids whose tokens in the FTS5 index differ from the chunk rows' (every token, every
    position): the chunk rows are indexed again into a temporary FTS5 table with the same
    tokenizer, and the two are compared through fts5vocab 'instance' tables."""
    import re

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


def rebuild_keywords(db: sqlite3.Connection) -> None:
    """Index every chunk row again, the way the manifest's trigger does."""
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
    db.execute(f"INSERT INTO chunks_fts(rowid, title, heading, text) {FTS_ROWS}")
    db.commit()


def _check_vectors(config: Config, chunks: dict[str, tuple[str, str]], db: sqlite3.Connection, dim: int,
                   report: VerifyReport) -> None:
    from .store import _forget_chroma_clients
    from .store.vectors import ChromaStore

    path = config.index_dir / CHROMA_NAME
    if not config.chroma_url:
        if not path.exists():
            if chunks:
                report.problems.append(Problem(STORE_MISSING, str(path), f"{len(chunks)} chunks but no vector store"))
            return
        if not vectors_open_in_child(path):
            report.problems.append(Problem(STORE_BROKEN, str(path), "the vector store does not open or "
                                           "answer a query (checked in a child process)"))
            return
    try:
        if config.chroma_url:
            from .store import _remote_collection

            store = ChromaStore.remote(config.chroma_url, name=_remote_collection(config))
        else:
            store = ChromaStore.persistent(path)
        _compare_vectors(store, chunks, db, dim, report)
    except Exception as exc:  # noqa: BLE001 - any failure of the store is a finding, not a crash
        report.problems.append(Problem(STORE_BROKEN, str(path), f"{type(exc).__name__}: {exc}"[:300]))
    finally:
        _forget_chroma_clients()


def _compare_vectors(store, chunks: dict[str, tuple[str, str]], db: sqlite3.Connection, dim: int,
                     report: VerifyReport) -> None:
    seen: set[str] = set()
    extra: dict[str, int] = {}
    wrong_path: dict[str, int] = {}
    stale: dict[str, int] = {}
    offset = 0
    while True:
        page = store.col.get(include=["metadatas", "embeddings"], limit=_PAGE, offset=offset)
        ids = page["ids"]
        if not ids:
            break
        offset += len(ids)
        metas = page["metadatas"] or [None] * len(ids)
        embeddings = page["embeddings"]
        keys = [chunks[cid][1] for cid in ids if cid in chunks]
        cached = _cached(db, keys, dim)
        for i, cid in enumerate(ids):
            seen.add(cid)
            meta_path = (metas[i] or {}).get("path", "")
            if cid not in chunks:
                extra[meta_path] = extra.get(meta_path, 0) + 1
                continue
            path, key = chunks[cid]
            if meta_path != path:
                wrong_path[path] = wrong_path.get(path, 0) + 1
            want = cached.get(key)
            if want is not None and embeddings is not None and not _same_vector(embeddings[i], want):
                stale[path] = stale.get(path, 0) + 1
        if len(ids) < _PAGE:
            break
    missing: dict[str, int] = {}
    for cid in chunks.keys() - seen:
        p = chunks[cid][0]
        missing[p] = missing.get(p, 0) + 1
    for path, n in sorted(missing.items()):
        report.problems.append(Problem(VECTORS_MISSING, path, f"{n} chunk(s) have no vector in the store"))
    for path, n in sorted(extra.items()):
        report.problems.append(Problem(VECTORS_EXTRA, path, f"{n} vector(s) of chunks the manifest does not have"))
    for path, n in sorted(wrong_path.items()):
        report.problems.append(Problem(VECTORS_PATH, path, f"{n} vector(s) filed under another path"))
    for path, n in sorted(stale.items()):
        report.problems.append(Problem(VECTORS_STALE, path, f"{n} vector(s) differ from the cached embedding"))
    report.vectors = len(seen)
    count = store.count()
    if count != len(chunks) or count != len(seen):
        report.problems.append(Problem(COUNTS, "", f"manifest has {len(chunks)} chunks, the vector store "
                                       f"counts {count} (and lists {len(seen)})"))


def _cached(db: sqlite3.Connection, keys: list[str], dim: int) -> dict[str, np.ndarray]:
    result: dict[str, np.ndarray] = {}
    for start in range(0, len(keys), 500):
        part = keys[start:start + 500]
        for key, blob in db.execute(f"SELECT key, vec FROM vectors WHERE key IN ({','.join('?' * len(part))})",
                                    part):
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.shape[0] == dim:
                result[key] = vec
    return result


def _same_vector(have, want: np.ndarray) -> bool:
    have = np.asarray(have, dtype=np.float32)
    return have.shape == want.shape and bool(np.allclose(have, want, rtol=1e-4, atol=1e-5))


# ---------------------------------------------------------------------------------- repairing


def repair(config: Config, report: VerifyReport, progress: ProgressFn | None = None,
           wait: float = 10.0) -> VerifyReport:
    """Fix what ``report`` found, then check again; returns the new report (with ``repaired``)."""
    from .pipeline import Indexer

    say = progress or (lambda _msg: None)
    actions: list[str] = []
    kinds = report.kinds()
    if MANIFEST_CORRUPT in kinds:
        actions += _rebuild_from_scratch(config, progress)
    else:
        with Indexer(config, role="verify", wait=wait) as indexer:
            idx = indexer.idx  # opening it as a writer already recovered an interrupted write
            if INTERRUPTED in kinds:
                actions.append("finished the interrupted write")
            if KEYWORD_INDEX in kinds:
                say("rebuilding the keyword index")
                rebuild_keywords(idx.manifest.db)
                actions.append("rebuilt the keyword index from the chunk rows")
            if ORPHAN_CHUNKS in kinds:
                cur = idx.manifest.db.execute("DELETE FROM chunks WHERE path NOT IN (SELECT path FROM files)")
                idx.manifest.db.commit()
                actions.append(f"dropped {cur.rowcount} chunk row(s) of unlisted files")
            if kinds & VECTOR_KINDS:
                say("rebuilding the vector store from the manifest's cache")
                lost = idx.rebuild_vectors()
                actions.append("rebuilt the vector store from the manifest's vector cache and swapped it in")
                if lost:
                    actions.append(f"{len(lost)} file(s) had vectors missing from the cache: re-indexing them")
            else:
                lost = []
            missing = sorted({p.path for p in report.problems if p.kind == FILE_MISSING})
            if missing:
                idx.write([], missing)
                actions.append(f"removed {len(missing)} file(s) that are gone from the index")
            changed = sorted({p.path for p in report.problems if p.kind in (FILE_CHANGED, CACHE_MISSING)}
                             | set(lost))
            changed = [p for p in changed if os.path.lexists(p)]
            if changed:
                say(f"re-indexing {len(changed)} file(s)")
                roots = [Path(r) for r in idx.manifest.get_json("roots", []) or [] if Path(r).exists()]
                if roots:
                    # Forget the recorded size and mtime: a change that kept both (a tool that
                    # restores mtime) is invisible to the stat check that indexing starts with.
                    for path in changed:
                        idx.manifest.touch_file(path, -1, -1)
                    idx.manifest.db.commit()
                    result = indexer.run(roots, scope=[Path(p) for p in changed])
                    actions.append(f"re-indexed {result.files_indexed} changed file(s)")
                    for failure in result.files_failed:
                        actions.append(f"could not re-index {failure.path}: {failure.reason}")
    final = verify(config, progress)
    final.repaired = actions
    return final


def _rebuild_from_scratch(config: Config, progress: ProgressFn | None) -> list[str]:
    """The manifest itself is damaged: set it (and Chroma) aside and index the roots again."""
    from .pipeline import index

    roots = _roots_of_damaged(config.index_dir / MANIFEST_NAME)
    aside = config.index_dir / f"damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    with WriteLock(config.index_dir / LOCK_NAME, "verify"):  # no writer may have it open
        aside.mkdir(mode=0o700)
        for name in (MANIFEST_NAME, MANIFEST_NAME + "-wal", MANIFEST_NAME + "-shm", CHROMA_NAME):
            if (config.index_dir / name).exists():
                os.rename(config.index_dir / name, aside / name)
    actions = [f"moved the damaged manifest and vector store to {aside}"]
    roots = [r for r in roots if Path(r).is_dir()]
    if roots:
        report = index(config, [Path(r) for r in roots],
                       progress=(lambda e, d: progress(d["text"]) if progress and e == "message" else None))
        actions.append(f"indexed {len(roots)} folder(s) again: {report.files_indexed} file(s)")
    else:
        actions.append("no folder could be read from the damaged manifest: run `rag index PATH`")
    return actions


def _roots_of_damaged(path: Path) -> list[str]:
    import json

    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'roots'").fetchone()
            return list(json.loads(row[0])) if row else []
        finally:
            db.close()
    except (sqlite3.DatabaseError, ValueError, TypeError):
        return []
