"""Reading an indexed note back, line range by line range, without reading anything else.

This is what an agent calls after a search ("show me lines 20-60 of that note"), so the
path comes from outside and is treated as hostile. The policy:

- only a file **the index knows** can be read: its path as indexed (absolute, as search
  results give it) or relative to one of the indexed roots. Files the indexer skips
  (hidden folders such as ``.obsidian`` or ``.git``, ``.ragignore`` matches, other file
  types) are refused even when they sit under a root;
- a ``..`` component is refused outright, and the path must lie under an indexed root;
- the file's real path (symlinks resolved) must lie under the real path of a root as well,
  so an indexed note later replaced by a symlink to ``/etc/passwd`` is refused; the file is
  then opened with ``O_NOFOLLOW`` and, where ``/proc`` exists, the opened descriptor's path
  is checked again (a folder swapped for a symlink between the check and the open is caught);
- only regular files, at most ``max_file_mb``.

Line numbers are the file's own, 1-based and inclusive, as in search results and
citations. A PDF is read one page at a time (``page``), its lines numbered within the
page's text as the index numbered them; a PDF is parsed here only when its bytes are the
ones the indexer already parsed under its time and memory limits (same sha256).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..store import FileRecord, Index

MAX_CHARS = 100_000  # one answer stays a sensible size for a model's context


class NoteRefused(UsageError):
    """A path that is not an indexed note (outside the roots, escaping, unknown)."""

    hint = "Use a path from a search result (or relative to an indexed folder); `status` lists the folders."


@dataclass
class NoteText:
    path: str
    title: str
    line_start: int
    line_end: int
    total_lines: int
    text: str
    truncated: bool = False  # MAX_CHARS cut the range short: ask again from line_end + 1
    changed: bool = False  # the file's bytes differ from those indexed: citations may be off
    page: int | None = None
    pages: list[int] | None = None  # a PDF's pages that have text

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "title": self.title, "page": self.page, "pages": self.pages,
                "line_start": self.line_start, "line_end": self.line_end,
                "total_lines": self.total_lines, "truncated": self.truncated,
                "changed_since_indexed": self.changed, "text": self.text}


def read_note(index: Index, path: str, line_start: int | None = None, line_end: int | None = None,
              page: int | None = None, max_bytes: int = 50 * 2**20) -> NoteText:
    """The text of an indexed note, or of lines ``line_start``..``line_end`` of it."""
    record = resolve_note(index, path)
    data = _read_checked(record.path, index.roots(), max_bytes)
    changed = hashlib.sha256(data).hexdigest() != record.hash
    if record.path.lower().endswith(".pdf"):
        if changed:
            raise NoteRefused(f"{record.path}: the PDF changed since it was indexed",
                              hint="Run `rag index` to index it again, then read it.")
        lines, page, pages = _pdf_page_lines(record.path, data, page)
    else:
        if page is not None:
            raise UsageError(f"{record.path} is not a PDF: it has no pages", hint="Leave out `page`.")
        lines, pages = _text_lines(record.path, data), None
    first, last, truncated = _window(record.path, len(lines), line_start, line_end, lines)
    return NoteText(record.path, record.title, first, last, len(lines), "\n".join(lines[first - 1:last]),
                    truncated=truncated, changed=changed, page=page, pages=pages)


# ---------------------------------------------------------------------------------------
# Which file


def resolve_note(index: Index, path: str) -> FileRecord:
    """The index's record for ``path``, refusing anything that is not an indexed note."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise NoteRefused("no path given")
    if ".." in Path(path).parts:
        raise NoteRefused(f"{path}: '..' is not allowed in a note path")
    roots = index.roots()
    if os.path.isabs(path):
        candidates = [os.path.normpath(path)]
    else:
        candidates = [os.path.normpath(os.path.join(root, path)) for root in roots]
    inside = [c for c in candidates if any(_under(c, root) for root in roots)]
    if not inside:
        raise NoteRefused(f"{path}: outside the indexed folders ({', '.join(roots) or 'none yet'})")
    for candidate in inside:
        record = index.file(candidate)
        if record is not None:
            return record
    raise NoteRefused(f"{path}: not an indexed note",
                      hint="Only notes the index holds can be read; run `rag index` if it is new.")


def _under(path: str, root: str) -> bool:
    root = root.rstrip(os.sep) or os.sep
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def _read_checked(path: str, roots: list[str], max_bytes: int) -> bytes:
    """The bytes of ``path``, after checking that it resolves inside a root (symlinks followed)."""
    real_roots = [os.path.realpath(r) for r in roots]
    real = os.path.realpath(path)
    if not any(_under(real, r) for r in real_roots):
        raise NoteRefused(f"{path}: resolves outside the indexed folders (a symlink to {real})")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise NoteRefused(f"{path}: cannot open: {exc.strerror or exc}",
                          hint="It may have moved or been deleted since it was indexed; run `rag index`.") from None
    with os.fdopen(fd, "rb") as fh:
        opened = _fd_path(fd)
        if opened is not None and not any(_under(opened, r) for r in real_roots):
            raise NoteRefused(f"{path}: resolves outside the indexed folders ({opened})")
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NoteRefused(f"{path}: not a regular file")
        if st.st_size > max_bytes:
            raise NoteRefused(f"{path}: too large to read ({st.st_size / 2**20:.1f} MB)",
                              hint="Raise max_file_mb, or read it in another way.")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while we read
        raise NoteRefused(f"{path}: too large to read (over {max_bytes / 2**20:g} MB)")
    return data


def _fd_path(fd: int) -> str | None:
    """What an open descriptor really is (Linux /proc); None where that cannot be known."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


# ---------------------------------------------------------------------------------------
# Which lines


def _text_lines(path: str, data: bytes) -> list[str]:
    from ..ingest.errors import ParseError
    from ..ingest.text import decode

    try:
        text, _warnings = decode(data)
    except ParseError as exc:
        raise NoteRefused(f"{path}: {exc}") from None
    return _split(text)


def _split(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":  # a final newline ends the last line, it does not start one
        lines.pop()
    return lines


def _pdf_page_lines(path: str, data: bytes, page: int | None) -> tuple[list[str], int, list[int]]:
    from ..ingest.errors import ParseError
    from ..ingest.pdf import parse_pdf

    try:
        doc = parse_pdf(Path(path), data)
    except ParseError as exc:
        raise NoteRefused(f"{path}: {exc}") from None
    by_page = {s.page: s.text for s in doc.sections if s.page is not None}
    pages = sorted(by_page)
    page = pages[0] if page is None else page
    if page not in by_page:
        raise UsageError(f"{path}: page {page} has no text",
                         hint=f"Pages with text: {', '.join(map(str, pages))}.")
    return _split(by_page[page]), page, pages


def _window(path: str, total: int, start: int | None, end: int | None,
            lines: list[str]) -> tuple[int, int, bool]:
    """The 1-based inclusive range to return, checked, and cut at MAX_CHARS."""
    first = 1 if start is None else start
    last = total if end is None else min(end, total)
    if first < 1 or (end is not None and end < first):
        raise UsageError(f"{path}: bad line range {start}-{end}",
                         hint="Lines are 1-based and inclusive: line_start >= 1, line_end >= line_start.")
    if total and first > total:
        raise UsageError(f"{path}: line {first} is past the end (the text has {total} lines)")
    if not total:
        return 1, 0, False
    size, cut = 0, last
    for n in range(first, last + 1):
        size += len(lines[n - 1]) + 1
        if size > MAX_CHARS and n > first:
            cut = n - 1
            break
    return first, cut, cut < last
