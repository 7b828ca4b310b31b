"""Reading one file safely and parsing it in this process, by its extension.

The bytes are read once: the same buffer is hashed (``Document.sha256``) and parsed, so
the hash the index records always describes the bytes that were indexed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from ..types import Document
from .discover import MARKDOWN_SUFFIXES, PDF_SUFFIXES
from .errors import ParseError
from .obsidian import NoteResolver
from .pdf import PdfLimits


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
            raise ParseError(too_large(st.st_size, max_bytes))
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # it grew while we read
        raise ParseError(too_large(len(data), max_bytes))
    return data


def too_large(size: int, max_bytes: int) -> str:
    return (f"too large: {size / 2**20:.1f} MB (limit {max_bytes / 2**20:g} MB, "
            "set max_file_mb to raise it)")


def read_and_parse(path: Path, max_bytes: int, resolver: NoteResolver | None = None,
                   pdf_limits: PdfLimits | None = None, on_page=None) -> Document:
    """Read and parse one file in this process, dispatching on its extension. PDFs take their
    limits and report each page done to ``on_page(done, total)``."""
    suffix = path.suffix.lower()
    data = read_bytes(path, max_bytes)
    doc = _parse_bytes(path, suffix, data, resolver, pdf_limits, on_page)
    doc.sha256 = hashlib.sha256(data).hexdigest()
    return doc


def _parse_bytes(path: Path, suffix: str, data: bytes, resolver: NoteResolver | None,
                 pdf_limits: PdfLimits | None, on_page) -> Document:
    from .markdown import parse_markdown, parse_plain_text
    from .pdf import parse_pdf
    from .text import decode

    if suffix in PDF_SUFFIXES:
        if not data.strip():
            raise ParseError("empty file")
        return parse_pdf(path, data, pdf_limits, on_page)
    if suffix not in MARKDOWN_SUFFIXES:
        raise ParseError(f"unsupported file type: {suffix or '(none)'}")
    text, warnings = decode(data)
    if suffix == ".txt":
        return parse_plain_text(text, path, warnings)
    return parse_markdown(text, path, resolver, warnings)


