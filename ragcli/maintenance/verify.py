"""`rag verify`: an fsck for the index, and ``--repair`` to make it consistent again.

The store checks itself (``store.check.Inspection``: the manifest, the keyword index, the
vector store); this module adds what lies outside it (each indexed file still exists and
has its recorded hash), retries while a writer is busy, and repairs.

Repair never edits anything by hand: it uses the same machinery as indexing. An interrupted
write is recovered; the keyword index is rebuilt from the chunk rows; Chroma is rebuilt from
the manifest's vector cache in a fresh folder and swapped in (on a Chroma server: the index's
collection is emptied and filled again from the cache); missing files are removed;
changed files (and files whose vectors cannot be restored) are re-indexed with
``Indexer.run(scope=...)``. Then everything is checked again.

Stage functions here never print; ``ragcli.commands.verify`` renders the report.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import Config
from ..errors import LockedError, NoIndexError
from ..progress import ProgressFn, say
from ..store import LOCK_NAME, index_exists
from ..store.check import (CACHE_MISSING, CENTROID_MISSING, INTERRUPTED, KEYWORD_INDEX, MANIFEST_CORRUPT, ORPHAN_CHUNKS,
                           VECTOR_KINDS, Inspection, Problem)
from ..store.lock import WriteLock

# Problems with the files on disk (the store's own kinds are in ``store.check``).
FILE_MISSING = "file-missing"  # an indexed file is gone (or is no longer a regular file)
FILE_CHANGED = "file-changed"  # its bytes differ from the recorded hash
FILE_UNREADABLE = "file-unreadable"

__all__ = ["FILE_CHANGED", "FILE_MISSING", "FILE_UNREADABLE", "Problem", "VerifyReport", "repair", "verify"]


@dataclass
class VerifyReport:
    problems: list[Problem] = field(default_factory=list)
    files: int = 0
    chunks: int = 0
    vectors: int = 0
    pending: int = 0  # chunks written without a vector yet (phase one): a state, not a problem
    repaired: list[str] = field(default_factory=list)  # what --repair did, in words
    writer_active: bool = False  # another process held the write lock while we looked

    @property
    def ok(self) -> bool:
        return not self.problems

    def kinds(self) -> set[str]:
        return {p.kind for p in self.problems}

    def to_json(self) -> dict:
        data = {"ok": self.ok, "problems": [asdict(p) for p in self.problems],
                "files": self.files, "chunks": self.chunks, "vectors": self.vectors,
                "vectors_pending": self.pending}
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
    with Inspection(config) as look:
        report.problems = look.problems  # the store's findings and ours, in one list
        if not look.readable:
            return True
        generation_before = look.generation()
        dirty = look.interrupted()
        files = look.files()
        report.files, report.chunks = len(files), len(look.chunks())
        report.pending = look.pending() if look.dim() else 0
        look.check_manifest(own_lock)
        say(progress, f"checking {len(files)} files")
        _check_files(files, report)
        say(progress, "checking the keyword index")
        look.check_keywords()
        say(progress, "checking the vector store")
        look.check_vectors()
        report.vectors = look.vectors
        return own_lock or (not dirty and not look.interrupted() and generation_before == look.generation())


def _check_files(files: dict[str, str], report: VerifyReport) -> None:
    for path, recorded in sorted(files.items()):
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
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        return hashlib.file_digest(fh, "sha256").hexdigest()


# ---------------------------------------------------------------------------------- repairing


def repair(config: Config, report: VerifyReport, progress: ProgressFn | None = None,
           wait: float = 10.0) -> VerifyReport:
    """Fix what ``report`` found, then check again; returns the new report (with ``repaired``)."""
    kinds = report.kinds()
    if MANIFEST_CORRUPT in kinds:
        actions = _rebuild_from_scratch(config, progress)
    else:
        actions = _repair_in_place(config, report, progress, wait)
    final = verify(config, progress)
    final.repaired = actions
    return final


def _repair_in_place(config: Config, report: VerifyReport, progress: ProgressFn | None,
                     wait: float) -> list[str]:
    from ..pipeline.indexing import Indexer

    actions: list[str] = []
    kinds = report.kinds()
    with Indexer(config, role="verify", wait=wait) as indexer:
        idx = indexer.idx  # opening it as a writer already recovered an interrupted write
        if INTERRUPTED in kinds:
            actions.append("finished the interrupted write")
        if KEYWORD_INDEX in kinds:
            say(progress, "rebuilding the keyword index")
            idx.rebuild_keywords()
            actions.append("rebuilt the keyword index from the chunk rows")
        if ORPHAN_CHUNKS in kinds:
            actions.append(f"dropped {idx.drop_orphan_chunks()} chunk row(s) of unlisted files")
        if kinds & VECTOR_KINDS:
            say(progress, "rebuilding the vector store from the manifest's cache")
            idx.rebuild_vectors()
            if config.chroma_url:
                actions.append(f"emptied the collection {idx.collection()} on {config.chroma_url} and "
                               "filled it again from the manifest's vector cache")
            else:
                actions.append("rebuilt the vector store from the manifest's vector cache and swapped it in")
        if CENTROID_MISSING in kinds:
            actions.append(f"computed {idx.fill_centroids()} note centroid(s) from the vector cache")
        missing = sorted({p.path for p in report.problems if p.kind == FILE_MISSING})
        if missing:
            idx.remove(missing)
            actions.append(f"removed {len(missing)} file(s) that are gone from the index")
        changed = sorted({p.path for p in report.problems if p.kind in (FILE_CHANGED, CACHE_MISSING)})
        changed = [p for p in changed if os.path.lexists(p)]
        if changed:
            say(progress, f"re-indexing {len(changed)} file(s)")
            roots = [Path(r) for r in idx.roots() if Path(r).exists()]
            if roots:
                # Forget the recorded size and mtime: a change that kept both (a tool that
                # restores mtime) is invisible to the stat check that indexing starts with.
                idx.forget_stat(changed)
                result = indexer.run(roots, scope=[Path(p) for p in changed])
                actions.append(f"re-indexed {result.files_indexed} changed file(s)")
                actions += [f"could not re-index {f.path}: {f.reason}" for f in result.files_failed]
        if idx.pending_counts()[0]:  # phase two of an interrupted run (not damage): finished here
            result = indexer.embed_pending()
            actions.append(f"embedded {result} chunk(s) that had no vector yet")
    return actions


def _rebuild_from_scratch(config: Config, progress: ProgressFn | None) -> list[str]:
    """The manifest itself is damaged: set it (and Chroma) aside and index the roots again."""
    from ..pipeline.indexing import index
    from ..store.recovery import set_aside_damaged

    aside, roots = set_aside_damaged(config)
    actions = [f"moved the damaged manifest and vector store to {aside}"]
    roots = [r for r in roots if Path(r).is_dir()]
    if roots:
        result = index(config, [Path(r) for r in roots], progress=progress)
        actions.append(f"indexed {len(roots)} folder(s) again: {result.files_indexed} file(s)")
    else:
        actions.append("no folder could be read from the damaged manifest: run `rag index PATH`")
    return actions
