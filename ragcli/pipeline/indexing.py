"""The index flow: discover -> parse -> chunk -> embed -> store, incrementally.

Stage functions never print: progress goes through a callback, results come back as an
``IndexReport``. An unchanged file costs one ``stat``; a file whose mtime moved but whose
bytes did not costs one read and a hash; only changed files are parsed and embedded, and
their chunks replaced exactly.

There is one way into the index for content: ``Indexer.add_documents``. Files from a notes
folder reach it through ``Indexer.run`` (discover, plan, parse); ``rag eval`` feeds it the
documents of a BEIR corpus. Both are chunked and written in the same batches by the same code.

A run has two phases. Phase one parses, chunks and commits every changed note's chunks and
keyword rows in batches, with the vectors the cache already has: keyword search finds every
note as soon as it ends, minutes into a big vault. Phase two (``embed_pending``) embeds the
chunks that have no vector yet, in committed batches. The index itself says what is left
(chunks whose vector is not cached), so a run killed in either phase is resumed by the next
one, and nothing is embedded twice.

With the embedder on a GPU the two phases overlap (``index_overlap``): phase two's embedder
takes phase one's committed batches while phase one goes on, so the GPU is not idle while
notes are parsed (``pipeline.embedding``). On the CPU the embedder would take the cores
phase one needs, and keyword search would be ready later: there the phases run in turn.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import closing
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..closing import Closing
from ..config import Config
from ..embed import same_vectors, vector_space
from ..errors import IndexMismatchError, UsageError
from ..ingest.chunk import chunk_document, chunker_settings
from ..ingest.pool import POOL_MIN_BYTES, ChunkPlan
from ..progress import ProgressFn
from ..progress import report as report_progress
from ..store import FileRecord, FileUpdate, Fingerprint, StoredChunk, content_hash, vector_key
from ..store.notes import unit_mean
from ..types import Document, FileFailure
from .embedding import BATCH_CHUNKS, PendingEmbedder
from .reading import read_files
from .session import Session

FLUSH_CHUNKS = BATCH_CHUNKS  # chunks per phase-one transaction, as phase two embeds them
FLUSH_FILES = 64


@dataclass
class IndexReport:
    roots: list[str]
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    files_failed: list[FileFailure] = field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    embedded: int = 0  # chunks embedded by this run (the rest came from the vector cache)
    reread: bool = False  # every file read again: the index was cut by an earlier chunker version
    keyword_seconds: float = 0.0  # until phase one was committed (keyword search finds every note)
    seconds: float = 0.0
    warnings: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        data = asdict(self)
        data["files_failed"] = [asdict(f) for f in self.files_failed]
        return data


def resolve_roots(index, paths: Sequence[Path] | None) -> list[Path]:
    """The folders to index: the ones given (as the user wrote them, made absolute), else the
    remembered ones. A path reached through a symlink keeps the user's spelling, so results
    cite the paths they know; a new spelling of a folder already indexed (the link and its
    target) keeps the remembered one, so no note is indexed twice."""
    remembered = [Path(p) for p in index.roots()]
    if paths:
        by_real = {os.path.realpath(r): r for r in remembered}
        roots = []
        for p in paths:
            given = Path(os.path.abspath(Path(p).expanduser()))
            roots.append(by_real.get(os.path.realpath(given), given))
    else:
        roots = remembered
        if not roots:
            raise UsageError("no folder to index yet", hint="Give one: rag index ~/notes")
    for root in roots:
        if not root.exists():
            raise UsageError(f"{root}: no such folder (or not reachable)",
                             hint="Check the path; a missing root is never treated as 'all deleted'.")
    return roots


class Indexer(Closing):
    """A writing session on the index: holds the write lock, and loads the embedder and
    the parser worker once, so a long-lived writer (the watcher) pays for them once."""

    def __init__(self, config: Config, role: str = "index", progress: ProgressFn | None = None,
                 wait: float = 0.0, cancel: threading.Event | None = None):
        self.config = config
        self.progress = progress
        self.session = Session(config, progress, cancel)
        self.idx = self.session.open_writer(role=role, wait=wait)
        self._fingerprint_checked = False
        self._embedding: PendingEmbedder | None = None  # phase two, once started (during phase one: the overlap)

    def close(self) -> None:
        self.session.close()

    # -- models, loaded when a file needs them -----------------------------------------------
    def embedder(self, rebuild: bool = False, start_over_on_mismatch: bool = False):
        """The embedder, with the index's fingerprint checked (or adopted) on first use."""
        embedder = self.session.embedder
        if not self._fingerprint_checked or rebuild:
            wanted = Fingerprint(embedder.model_id, int(embedder.dim), chunker_settings(self.config),
                                 embedder.settings)
            try:
                self.idx.adopt_fingerprint(wanted, rebuild=rebuild, same_vectors=same_vectors(self.config))
            except IndexMismatchError:
                if not start_over_on_mismatch:
                    raise
                self.idx.adopt_fingerprint(wanted, rebuild=True)
            self._fingerprint_checked = True
        return embedder

    def warm_up(self) -> None:
        """Load the embedder and the parser now (the watcher: the first save is not slowed)."""
        self.embedder()
        self.session.parser  # noqa: B018 - the property starts the parse worker

    # -- files -------------------------------------------------------------------------------
    def run(self, paths: Sequence[Path] | None = None, rebuild: bool = False,
            scope: Sequence[Path] | None = None) -> IndexReport:
        """Index ``paths`` (default: the remembered roots); ``scope`` limits it to some files."""
        started = time.monotonic()
        roots = resolve_roots(self.idx, paths)
        if paths:
            self.idx.remember_roots(map(str, roots))
        report = IndexReport(roots=[str(r) for r in roots])
        if rebuild:
            self.embedder(rebuild=True)
        elif self.idx.check_chunker(chunker_settings(self.config)):
            report.reread = True  # this ragcli cuts notes otherwise: every file again, cached vectors kept
            self.embedder()
        else:
            if _embedding_settings_in_play(self.config, self.idx.fingerprint()):
                self.embedder()  # pooling or prefixes set (or recorded): checked even with nothing to do
        try:
            self._sync_files(roots, report, scope)
            # Phase one is committed: every changed note is found by keyword search from here on.
            report.keyword_seconds = round(time.monotonic() - started, 3)
            self.embed_pending(report)
        finally:
            self._stop_embedding()
        report.seconds = round(time.monotonic() - started, 3)
        return report

    def _sync_files(self, roots: list[Path], report: IndexReport, scope: Sequence[Path] | None) -> None:
        """Reconcile the index with what is on disk under ``roots`` (or only within ``scope``)."""
        from ..ingest.discover import Found, discover_in, found_at

        exclude = [self.config.data_dir, self.config.index_dir]
        known = self.idx.files()
        found: dict[str, Found] = {}
        for item in discover_in(roots, exclude, scope):
            if isinstance(item, Found):
                found[str(item.path)] = item
            else:
                report.files_failed.append(FileFailure(str(item.path), item.reason))
        report.files_seen = len(found)
        areas = [str(a) for a in (scope if scope is not None else roots)]
        plan = self.idx.plan({p: (f.size, f.mtime_ns) for p, f in found.items()}, areas, known)
        todo = set(plan.new) | self._changed(plan.suspects, found)
        report.files_unchanged = len(found) - len(todo)
        for path in sorted(self.idx.dependents(todo | set(plan.removed)) - todo):
            item = found.get(path) or found_at(path, roots)  # a note embedding a changed note
            if item is not None:
                found[path] = item
                todo.add(path)
        order = sorted(todo)
        sizes = [found[p].size for p in order]
        report_progress(self.progress, "Indexing", 0, len(todo), work_total=sum(sizes))
        if plan.removed:
            report.chunks_removed += self.idx.remove(plan.removed)
            report.files_removed = len(plan.removed)
        if todo:
            from ..ingest import NoteResolver

            resolver = NoteResolver.from_paths(set(found) | self.idx.paths(), roots)
            # Chroma loads on a thread while the notes are parsed and embedded (both let go of
            # the GIL); started any earlier, its import would starve this thread's Python.
            self.idx.open_vectors_ahead()
            docs = read_files(self.session, [found[p] for p in order], resolver, roots, report,
                              self._chunk_plan(resolver, sum(sizes)))
            self._start_overlap()
            with closing(docs):  # a run stopped half-way lets the workers go now
                self.add_documents(docs, report, total=len(todo), sizes=sizes)
        self.idx.prune()  # before phase two: a vector no chunk uses is never embedded for nothing

    def _changed(self, suspects: dict[str, str], found: dict) -> set[str]:
        """Suspects whose bytes changed; the others get their new size and mtime recorded."""
        changed, touched = set(), []
        for path, recorded in suspects.items():
            if _hash_file(found[path].path) == recorded:
                touched.append((path, found[path].size, found[path].mtime_ns))
            else:
                changed.add(path)
        self.idx.mark_unchanged(touched)
        return changed

    # -- documents: the one way content enters the index --------------------------------------
    def add_documents(self, docs: Iterable[tuple[FileRecord, Document] | None], report: IndexReport,
                      total: int | None = None, sizes: Sequence[int] | None = None) -> None:
        """Chunk, embed what the cache lacks, and write, in batches of whole documents.

        A ``None`` item stands for a document that could not be read (counted, nothing written).
        ``sizes``, each document's size in bytes in the same order, make the progress (and so
        its time left) follow the work rather than the count of files.
        """
        pending: list[_Pending] = []
        pending_chunks = done = work = 0
        work_total = sum(sizes) if sizes is not None else None
        chunks_seen = 0
        for item in docs:
            done += 1
            path = ""
            if item is not None:
                embedder = self.embedder()
                entry = self._chunk(item[0], item[1], embedder, *item[2:])
                pending.append(entry)
                pending_chunks += len(entry.chunks)
                chunks_seen += len(entry.chunks)
                path = f"{item[0].path} ({len(entry.chunks)} chunks)"
            work += sizes[done - 1] if sizes is not None and done <= len(sizes) else 0
            report_progress(self.progress, "Indexing", done, total, note=f"{chunks_seen} chunks", item=path,
                            work_done=work, work_total=work_total)
            if pending_chunks >= FLUSH_CHUNKS or len(pending) >= FLUSH_FILES:
                self._flush(pending, report)
                pending, pending_chunks = [], 0
                if self._embedding is not None:  # the overlap: the embedder takes what was committed
                    self._embedding.feed()
        if pending:
            self._flush(pending, report)

    def remove(self, paths: Sequence[str], report: IndexReport) -> None:
        report.chunks_removed += self.idx.remove(list(paths))
        report.files_removed += len(paths)

    def _chunk(self, record: FileRecord, doc: Document, embedder, chunks: list | None = None) -> _Pending:
        if chunks is None:  # not cut by a worker
            chunks = chunk_document(doc, embedder.count_tokens, self._budget(embedder), self.config.chunk_overlap,
                                    getattr(embedder, "counts_add_up", False))
        aliases = " ".join(doc.aliases)
        space = vector_space(embedder)
        return _Pending(record, [StoredChunk(c, vector_key(space, c.embed_text()), aliases) for c in chunks])

    def _budget(self, embedder) -> int:
        # The document prefix is embedded with every chunk: it takes its share of the window.
        prefix = embedder.count_tokens(embedder.document_prefix) if embedder.document_prefix else 0
        return min(self.config.chunk_tokens, embedder.max_tokens - prefix)

    def _chunk_plan(self, resolver, size: int) -> ChunkPlan | None:
        """How workers chunk, when the run is big enough for them and the embedder's count
        can go to another process (``token_counter``)."""
        if size < POOL_MIN_BYTES:
            return None
        embedder = self.embedder()
        counter = getattr(embedder, "token_counter", None)
        if counter is None:
            return None
        return ChunkPlan(counter, self._budget(embedder), self.config.chunk_overlap,
                         int(self.config.max_file_mb * 1024 * 1024), resolver.to_dict(),
                         getattr(embedder, "counts_add_up", False))

    def _flush(self, pending: list[_Pending], report: IndexReport) -> None:
        """Phase one: write the batch of files (chunks and keyword rows) in one transaction.
        Chunks whose vector is cached get it now; the others wait for ``embed_pending``."""
        self.session.check_cancelled()
        cached = self.idx.cached_vectors(list({s.vec_key for entry in pending for s in entry.chunks}))
        updates = []
        for entry in pending:
            update = FileUpdate(entry.record, entry.chunks)
            vectors = [cached.get(s.vec_key) for s in entry.chunks]
            if vectors and all(v is not None for v in vectors):
                # where the note's chunks lie as a whole: retrieval's note-level evidence (a note
                # with chunks still to embed gets it when phase two has embedded the last one)
                update.centroid = unit_mean(vectors)
            updates.append(update)
        added, removed = self.idx.apply(updates)
        report.chunks_added += added
        report.chunks_removed += removed
        report.files_indexed += len(pending)

    def embed_pending(self, report: IndexReport | None = None) -> int:
        """Phase two: embed every chunk written without a vector, a batch at a time, each
        batch committed (``Index.add_vectors``): a run killed here resumes where it stopped,
        and nothing is embedded twice. Returns how many vectors were made (with those made
        while phase one went on)."""
        if self._embedding is None and not self.idx.pending_counts()[0]:
            self.idx.pending_done()  # a run killed in its last batch leaves only this to do
            return 0
        embedding = self._embedding or self._embedding_started()
        try:
            embedding.drain()
        finally:
            self._stop_embedding()
        self.idx.pending_done()
        if report is not None:  # a run stopped in here raises: no report goes out
            report.embedded += embedding.made
        return embedding.made

    def _embedding_started(self, after: int = 0) -> PendingEmbedder:
        self._embedding = PendingEmbedder(self.idx, self.embedder(), self.progress, self.session.check_cancelled,
                                          after)
        return self._embedding

    def _start_overlap(self) -> None:
        """Start phase two beside phase one when the embedder does not use the cores phase one
        needs (``overlaps``): from the rows this run writes on."""
        if self.config.index_overlap != "off" and overlaps(self.config, self.embedder()):
            self._embedding_started(after=self.idx.rowid_end() - 1)

    def _stop_embedding(self) -> None:
        """Wait for the batch on the embedder's thread, if any, and forget it."""
        embedding, self._embedding = self._embedding, None
        if embedding is not None:
            embedding.close()


def overlaps(config: Config, embedder) -> bool:
    """Whether phase two runs beside phase one: ``index_overlap`` on, or auto with the
    embedder's layers on a GPU. On the CPU the embedder's threads take every core: phase one,
    and with it keyword search, would be ready later (#23's "searchable in minutes")."""
    if config.index_overlap != "auto":
        return config.index_overlap == "on"
    return getattr(embedder, "n_gpu_layers", 0) > 0


@dataclass
class _Pending:
    """A document chunked and waiting for its batch to be embedded and written."""

    record: FileRecord
    chunks: list[StoredChunk]


def index(config: Config, paths: Sequence[Path] | None = None, rebuild: bool = False,
          progress: ProgressFn | None = None, role: str = "index") -> IndexReport:
    """Build or update the index for ``paths`` (default: the remembered roots)."""
    with Indexer(config, role=role, progress=progress) as indexer:
        return indexer.run(paths, rebuild=rebuild)


def _embedding_settings_in_play(config: Config, fingerprint: dict | None) -> bool:
    from ..models.catalog import embed_entry

    configured = (config.embed_pooling or config.embed_query_prefix or config.embed_document_prefix
                  or (embed_entry(config.embed_model) is not None and not config.embed_url))
    return bool(fingerprint) and bool(configured or fingerprint.get("embedding"))


def remembered_roots(config: Config) -> list[str]:
    """The folders indexed before (none when there is no index yet)."""
    from ..store import Index, index_exists

    if not index_exists(config):
        return []
    with Index.open_reader(config) as idx:
        return idx.roots()


def _hash_file(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except OSError:
        return None
