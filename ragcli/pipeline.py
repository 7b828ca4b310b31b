"""``index``: discover → parse → chunk → embed → store, incrementally.

Stage functions never print: progress goes through a callback, results come back as an
``IndexReport``. An unchanged file costs one ``stat``; a file whose mtime moved but whose
bytes did not costs one read and a hash; only changed files are parsed and embedded, and
their chunks replaced exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .config import Config
from .errors import UsageError
from .store import FileUpdate, Index
from .store.manifest import FileRecord, StoredChunk, content_hash, vector_key
from .types import FileFailure

FLUSH_CHUNKS = 128  # chunks embedded and written per transaction
FLUSH_FILES = 64

ProgressFn = Callable[[str, dict], None]  # (event, data): "start" {total}, "file" {path, chunks}


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
    seconds: float = 0.0
    warnings: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        data = asdict(self)
        data["files_failed"] = [asdict(f) for f in self.files_failed]
        return data


def chunker_settings(config: Config) -> dict:
    """What shapes the chunks; part of the index fingerprint, checkable without any model."""
    from .ingest.chunk import CHUNKER_VERSION

    return {"version": CHUNKER_VERSION, "tokens": config.chunk_tokens, "overlap": config.chunk_overlap}


def remembered_roots(index: Index) -> list[str]:
    return index.manifest.get_json("roots", []) or []


def resolve_roots(index: Index, paths: Sequence[Path] | None) -> list[Path]:
    if paths:
        roots = [Path(p).expanduser().resolve() for p in paths]
    else:
        roots = [Path(p) for p in remembered_roots(index)]
        if not roots:
            raise UsageError("no folder to index yet", hint="Give one: rag index ~/notes")
    for root in roots:
        if not root.exists():
            raise UsageError(f"{root}: no such folder (or not reachable)",
                             hint="Check the path; a missing root is never treated as 'all deleted'.")
    return roots


class _Embedding:
    """The embedder, loaded only when a file actually needs embedding."""

    def __init__(self, config: Config, index: Index, progress: ProgressFn | None):
        self.config, self.index, self.progress = config, index, progress
        self._embedder = None

    def get(self, rebuild: bool = False):
        if self._embedder is None:
            from .embed import make_embedder

            self._embedder = make_embedder(self.config, progress=lambda msg: _emit(self.progress, "message", text=msg))
            self.index.check_fingerprint(index_fingerprint(self.config, self._embedder), rebuild=rebuild)
        return self._embedder


def index_fingerprint(config: Config, embedder) -> dict:
    return {"embedding_model": embedder.model_id, "dim": int(embedder.dim),
            "chunker": chunker_settings(config)}


def _emit(progress: ProgressFn | None, event: str, **data) -> None:
    if progress is not None:
        progress(event, data)


class Indexer:
    """A writing session on the index: holds the write lock, and loads the embedder and
    the parser worker once, so a long-lived writer (the watcher) pays for them once."""

    def __init__(self, config: Config, role: str = "index", progress: ProgressFn | None = None,
                 wait: float = 0.0):
        self.config = config
        self.progress = progress
        self.idx = Index.open_writer(config, role=role, wait=wait)
        self.embedding = _Embedding(config, self.idx, progress)
        self._parser = None

    def close(self) -> None:
        if self._parser is not None:
            self._parser.close()
            self._parser = None
        self.idx.close()

    def __enter__(self) -> "Indexer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_chunker(self) -> None:
        """Settings that change the chunks are checked on every run, even with nothing to do."""
        have = self.idx.fingerprint()
        if have and have.get("chunker") != chunker_settings(self.config):
            from .errors import IndexMismatchError
            from .store import describe_mismatch

            raise IndexMismatchError(describe_mismatch({"chunker": have.get("chunker")},
                                                       {"chunker": chunker_settings(self.config)}))

    @property
    def parser(self):
        if self._parser is None:
            from .ingest import Parser

            self._parser = Parser(self.config)
        return self._parser

    def run(self, paths: Sequence[Path] | None = None, rebuild: bool = False,
            scope: Sequence[Path] | None = None) -> IndexReport:
        """Index ``paths`` (default: the remembered roots); ``scope`` limits it to some files."""
        started = time.monotonic()
        roots = resolve_roots(self.idx, paths)
        if paths:
            self.idx.manifest.set_json("roots", sorted({*remembered_roots(self.idx), *map(str, roots)}))
        report = IndexReport(roots=[str(r) for r in roots])
        if rebuild:
            self.embedding.get(rebuild=True)
        else:
            self._check_chunker()
        update_roots(self, roots, report, scope)
        report.seconds = round(time.monotonic() - started, 3)
        return report


def index(config: Config, paths: Sequence[Path] | None = None, rebuild: bool = False,
          progress: ProgressFn | None = None, role: str = "index") -> IndexReport:
    """Build or update the index for ``paths`` (default: the remembered roots)."""
    with Indexer(config, role=role, progress=progress) as indexer:
        return indexer.run(paths, rebuild=rebuild)


def update_roots(indexer: Indexer, roots: list[Path], report: IndexReport,
                 scope: Sequence[Path] | None = None) -> None:
    """Reconcile the index with what is on disk under ``roots``.

    ``scope`` narrows the work to some files or folders inside the roots (the watcher's
    changed paths); None means everything under the roots.
    """
    from .ingest.discover import Found

    config, idx, progress = indexer.config, indexer.idx, indexer.progress
    exclude = [config.data_dir, config.index_dir]
    found: dict[str, Found] = {}
    for item in _discover(roots, exclude, scope):
        if isinstance(item, Found):
            found[str(item.path)] = item
        else:
            report.files_failed.append(FileFailure(str(item.path), item.reason))
    report.files_seen = len(found)
    known = idx.manifest.files()
    areas = [Path(p) for p in scope] if scope is not None else roots
    in_scope = [p for p in known if any(p == str(a) or _is_under(p, a) for a in areas)]
    removed = sorted(p for p in in_scope if p not in found)
    todo = _changed_files(idx, found, known, report)
    dependents = idx.manifest.dependents(set(todo) | set(removed)) - set(todo)
    for path in sorted(dependents):  # notes embedding a changed note: their text changed too
        item = found.get(path) or _found(path, roots)
        if item is not None:
            found[path] = item
            todo.add(path)
    _emit(progress, "start", total=len(todo), unchanged=report.files_unchanged)
    if removed:
        _, dropped = idx.write([], removed)
        report.chunks_removed += dropped
        report.files_removed = len(removed)
    if todo:
        _index_files(indexer, [found[p] for p in sorted(todo)], set(found) | set(known), roots, report)
    idx.manifest.prune_vectors()
    idx.manifest.db.commit()


def _found(path: str, roots: list[Path]):
    from .ingest.discover import Found, classify

    verdict = classify(Path(path), roots)
    return verdict if isinstance(verdict, Found) else None


def _discover(roots: list[Path], exclude: list[Path], scope: Sequence[Path] | None):
    """Everything under the roots, or only what lies in ``scope``, judged by the same rules."""
    import os

    from .ingest.discover import classify, discover

    if scope is None:
        yield from discover(roots, exclude=exclude)
        return
    seen: set[str] = set()
    for area in scope:
        area = Path(area)
        if area.is_dir() and not area.is_symlink():
            paths = [Path(d) / f for d, _dirs, files in os.walk(area) for f in files]
        else:
            paths = [area]
        for path in sorted(paths):
            if str(path) in seen:
                continue
            seen.add(str(path))
            verdict = classify(path, roots, exclude)
            if verdict is not None:
                yield verdict


def _is_under(path: str, root: Path) -> bool:
    root_s = str(root).rstrip("/") + "/"
    return path.startswith(root_s)


def _changed_files(idx: Index, found: dict, known: dict[str, FileRecord], report: IndexReport) -> set[str]:
    """Paths whose bytes changed; files whose stat moved but whose hash did not are touched."""
    todo: set[str] = set()
    touched = False
    for path, item in found.items():
        rec = known.get(path)
        if rec and rec.size == item.size and rec.mtime_ns == item.mtime_ns:
            report.files_unchanged += 1
            continue
        if rec:
            digest = _hash_file(item.path)
            if digest == rec.hash:
                idx.manifest.touch_file(path, item.size, item.mtime_ns)
                touched = True
                report.files_unchanged += 1
                continue
        todo.add(path)
    if touched:
        idx.manifest.db.commit()
    return todo


def _hash_file(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except OSError:
        return None


def _index_files(indexer: Indexer, items: list, all_paths: set[str], roots: list[Path],
                 report: IndexReport) -> None:
    from .ingest import NoteResolver, ParseError

    config, idx, embedding = indexer.config, indexer.idx, indexer.embedding
    resolver = NoteResolver.from_paths([Path(p) for p in all_paths], roots)
    pending: list[tuple[FileRecord, list]] = []
    pending_chunks = 0
    for item in items:
        prepared = _prepare(config, indexer.parser, resolver, item, embedding, report, ParseError)
        if prepared is not None:
            pending.append(prepared)
            pending_chunks += len(prepared[1])
        _emit(indexer.progress, "file", path=str(item.path), chunks=len(prepared[1]) if prepared else 0)
        if pending_chunks >= FLUSH_CHUNKS or len(pending) >= FLUSH_FILES:
            _flush(idx, embedding, pending, report)
            pending, pending_chunks = [], 0
    if pending:
        _flush(idx, embedding, pending, report)


def _prepare(config, parser, resolver, item, embedding, report, parse_error):
    """Read, hash, parse and chunk one file; None (and a recorded failure) if it cannot be."""
    from .ingest.chunk import chunk_document
    from .ingest.discover import root_of

    path = item.path
    try:
        digest = content_hash(path.read_bytes())
        doc = parser.parse(path, resolver)
    except parse_error as exc:
        report.files_failed.append(FileFailure(str(path), str(exc)))
        return None
    except OSError as exc:
        report.files_failed.append(FileFailure(str(path), f"cannot read: {exc.strerror or exc}"))
        return None
    embedder = embedding.get()
    budget = min(config.chunk_tokens, embedder.max_tokens)
    chunks = chunk_document(doc, embedder.count_tokens, budget, config.chunk_overlap)
    for warning in doc.warnings:
        report.warnings.append({"path": str(path), "warning": warning})
    root = root_of(path, [Path(r) for r in report.roots]) or path.parent
    record = FileRecord(path=str(path), root=str(root), size=item.size, mtime_ns=item.mtime_ns,
                        hash=digest, title=doc.title, tags=tuple(doc.tags), date=doc.date,
                        embeds=tuple(getattr(doc, "embeds", ()) or ()), warnings=tuple(doc.warnings),
                        indexed_at=time.time())
    aliases = " ".join(doc.aliases)
    stored = [StoredChunk(c, vector_key(embedder.model_id, c.embed_text()), aliases) for c in chunks]
    return record, stored


def _flush(idx: Index, embedding: _Embedding, pending: list, report: IndexReport) -> None:
    """Embed what the cache lacks, then write the batch of files in one transaction."""
    embedder = embedding.get()
    keys = [s.vec_key for _rec, stored in pending for s in stored]
    cached = idx.manifest.cached_vectors(keys, embedder.dim)
    texts: dict[str, str] = {}
    for _rec, stored in pending:
        for s in stored:
            if s.vec_key not in cached:
                texts.setdefault(s.vec_key, s.chunk.embed_text())
    fresh: dict = {}
    items = list(texts.items())
    for start in range(0, len(items), FLUSH_CHUNKS):
        part = items[start:start + FLUSH_CHUNKS]
        got = dict(zip((k for k, _t in part), embedder.embed([t for _k, t in part])))
        if len(items) > FLUSH_CHUNKS:
            # A big file embeds over several slices: each is cached and committed (harmless on
            # its own, step 1 of the write protocol), so a run killed half-way through keeps
            # what it embedded and the next run gets further instead of starting over.
            idx.manifest.cache_vectors(got.items())
            idx.manifest.db.commit()
        fresh.update(got)
    updates = []
    for rec, stored in pending:
        need = {s.vec_key: fresh[s.vec_key] for s in stored if s.vec_key in fresh}
        updates.append(FileUpdate(rec, stored, need))
    added, removed = idx.write(updates)
    report.chunks_added += added
    report.chunks_removed += removed
    report.files_indexed += len(pending)

