"""``Parser``: parses files, in this process or in a limited child for PDFs and big notes.

Notes up to WORKER_MIN_BYTES parse in this process (fast: the 173-note Obsidian help vault
takes ~0.3 s); PDFs and bigger notes go to a child process with the configured time and
memory limits, so one bad file can neither hang nor crash a run. Whoever creates a Parser
owns its child process and closes it (a pipeline ``Session`` does).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..closing import Closing
from ..config import Config
from ..types import Document
from .discover import PDF_SUFFIXES
from .errors import ParseError
from .obsidian import NoteResolver
from .read import read_and_parse, too_large
from .worker import Worker

WORKER_MIN_BYTES = 2 * 1024 * 1024  # notes past this parse under the worker's limits


class Parser(Closing):
    """Parses files; owns the worker process that runs PDFs and big notes. Close it when done."""

    def __init__(self, config: Config):
        self.max_bytes = int(config.max_file_mb * 1024 * 1024)
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
            raise ParseError(too_large(st.st_size, self.max_bytes))
        if not self.in_process(path, st.st_size):
            return self.worker.parse(path, self.max_bytes, resolver.to_dict() if resolver else None)
        return read_and_parse(path, self.max_bytes, resolver)

    def in_process(self, path: Path, size: int) -> bool:
        """Whether a file this size parses without the worker's limits (Markdown, text)."""
        return path.suffix.lower() not in PDF_SUFFIXES and size <= WORKER_MIN_BYTES

    def close(self) -> None:
        self.worker.close()
