"""Phase one's reading: the files to index, parsed (and, given a ``ChunkPlan``, chunked in
worker processes), in order, for ``Indexer.add_documents``.

Each file gives ``(record, document, chunks)``, chunks None where the caller is to cut them
(a PDF, a big note, a run too small for workers), or None for a file that could not be read,
its reason added to the report. Failures are recorded, never raised.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

from ..ingest.pool import ChunkPlan, ChunkPool, PoolBroken
from ..store import FileRecord
from ..types import Document, FileFailure


def read_files(session, items: list, resolver, roots: list[Path], report,
               plan: ChunkPlan | None = None) -> Iterator[tuple[FileRecord, Document, list | None] | None]:
    """``items`` (``discover.Found``) read in order; see the module's docstring."""
    from ..ingest.discover import root_of

    roots_by_folder: dict[Path, Path] = {}  # root_of walks every root: once per folder
    for item, outcome in zip(items, _outcomes(session, items, resolver, plan)):
        session.check_cancelled()
        path = item.path
        if isinstance(outcome, str):
            report.files_failed.append(FileFailure(str(path), outcome))
            yield None
            continue
        doc, chunks = outcome
        for warning in doc.warnings:
            report.warnings.append({"path": str(path), "warning": warning})
        if path.parent not in roots_by_folder:
            roots_by_folder[path.parent] = root_of(path, roots) or path.parent
        yield FileRecord(path=str(path), root=str(roots_by_folder[path.parent]), size=item.size,
                         mtime_ns=item.mtime_ns, hash=doc.sha256, title=doc.title, tags=tuple(doc.tags),
                         date=doc.date, embeds=tuple(doc.embeds), warnings=tuple(doc.warnings),
                         indexed_at=time.time()), doc, chunks


def _outcomes(session, items: list, resolver, plan: ChunkPlan | None) -> Iterator:
    """For each item in order: ``(document, chunks or None)``, or the reason it failed."""
    pooled = [item.path for item in items if plan is not None and session.parser.in_process(item.path, item.size)]
    if not pooled:
        for item in items:
            yield _parse_here(session, item.path, resolver)
        return
    with ChunkPool(plan) as pool:
        results = pool.chunked(pooled)
        for item in items:
            if results is None or not session.parser.in_process(item.path, item.size):
                yield _parse_here(session, item.path, resolver)
                continue
            try:
                done = next(results)
            except PoolBroken:  # a worker died (killed, out of memory): go on without them
                results = None
                yield _parse_here(session, item.path, resolver)
                continue
            yield done.failure or (done.doc, done.chunks)


def _parse_here(session, path: Path, resolver):
    from ..ingest.errors import ParseError, failure_reason

    try:
        return session.parser.parse(path, resolver), None
    except (ParseError, OSError) as exc:
        return failure_reason(exc)
