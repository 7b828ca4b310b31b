"""Files → Documents: discover, parse (Markdown, Obsidian, PDF) and chunk.

Public API::

    with Parser(config) as parser:          # owns the parsing worker process
        doc = parser.parse(path, resolver)   # -> Document, or raises ParseError(reason)

    parse_file(path, config, resolver=None)  # the same through a shared Parser; close() ends it
    NoteResolver.from_paths(paths, roots).resolve("Note name") -> Path | None
    discover(roots, exclude) / classify(path, roots, exclude)   (see discover.py)
    chunk_document(doc, count_tokens, max_tokens, overlap)      (see chunk.py)

Notes up to WORKER_MIN_BYTES parse in this process (fast: the 173-note Obsidian help vault
takes ~0.3 s); PDFs and bigger notes go to a child process with the configured time and
memory limits, so one bad file can neither hang nor crash a run.
"""

from __future__ import annotations

import atexit
import os
import stat
from pathlib import Path

from ..config import Config
from ..types import Document
from .discover import MARKDOWN_SUFFIXES, PDF_SUFFIXES, Found, Skipped, classify, discover
from .errors import ParseError
from .obsidian import NoteResolver

__all__ = ["ParseError", "Parser", "parse_file", "close", "NoteResolver", "discover", "classify",
           "Found", "Skipped", "read_and_parse", "WORKER_MIN_BYTES"]

WORKER_MIN_BYTES = 2 * 1024 * 1024  # notes past this parse under the worker's limits


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """Read a regular file, at most max_bytes; a FIFO or device is refused, never blocked on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ParseError(f"cannot open: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ParseError("not a regular file")
        if st.st_size > max_bytes:
            raise ParseError(_too_large(st.st_size, max_bytes))
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew while we read
        raise ParseError(_too_large(len(data), max_bytes))
    return data


def _too_large(size: int, max_bytes: int) -> str:
    return (f"too large: {size / 2**20:.1f} MB (limit {max_bytes / 2**20:g} MB, "
            "set max_file_mb to raise it)")


def read_and_parse(path: Path, max_bytes: int, resolver: NoteResolver | None = None) -> Document:
    """Read and parse one file in this process, dispatching on its extension."""
    from .markdown import parse_markdown, parse_plain_text
    from .pdf import parse_pdf
    from .text import decode

    suffix = path.suffix.lower()
    data = read_bytes(path, max_bytes)
    if suffix in PDF_SUFFIXES:
        if not data.strip():
            raise ParseError("empty file")
        return parse_pdf(path, data)
    if suffix not in MARKDOWN_SUFFIXES:
        raise ParseError(f"unsupported file type: {suffix or '(none)'}")
    text, warnings = decode(data)
    if suffix == ".txt":
        return parse_plain_text(text, path, warnings)
    return parse_markdown(text, path, resolver, warnings)


class Parser:
    """Parses files; owns the worker process that runs PDFs and big notes. Close it when done."""

    def __init__(self, config: Config, worker_min_bytes: int = WORKER_MIN_BYTES):
        from .worker import Worker

        self.max_bytes = int(config.max_file_mb * 1024 * 1024)
        self.worker_min_bytes = worker_min_bytes
        self.worker = Worker(config.parse_timeout, config.parse_memory_mb)

    def parse(self, path: Path, resolver: NoteResolver | None = None) -> Document:
        """Parse one file; raise ParseError(reason) if it cannot be indexed."""
        path = Path(os.path.abspath(path))
        try:
            st = os.stat(path)
        except OSError as exc:
            raise ParseError(f"cannot open: {exc.strerror or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            raise ParseError("not a regular file")
        if st.st_size > self.max_bytes:
            raise ParseError(_too_large(st.st_size, self.max_bytes))
        if path.suffix.lower() in PDF_SUFFIXES or st.st_size > self.worker_min_bytes:
            return self.worker.parse(path, self.max_bytes, resolver.to_dict() if resolver else None)
        return read_and_parse(path, self.max_bytes, resolver)

    def close(self) -> None:
        self.worker.close()

    def __enter__(self) -> "Parser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_shared: dict[tuple, Parser] = {}


def parse_file(path: Path, config: Config, resolver: NoteResolver | None = None) -> Document:
    """Parse one file with a Parser shared per (limits) setting; close() ends its worker."""
    key = (config.parse_timeout, config.parse_memory_mb, config.max_file_mb)
    parser = _shared.get(key)
    if parser is None:
        parser = _shared[key] = Parser(config)
    return parser.parse(path, resolver)


def close() -> None:
    """End the shared parsers' worker processes (also done at interpreter exit)."""
    while _shared:
        _shared.popitem()[1].close()


atexit.register(close)
