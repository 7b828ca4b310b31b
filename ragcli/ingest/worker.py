"""A long-lived child process that parses files under a time and a memory limit.

One bad file (a PDF decompression bomb, a pathological note) can then neither hang nor
crash the indexing run: the parent kills the child on timeout, the child's RLIMIT_AS turns
a memory blow-up into MemoryError (or a crash), and the next file gets a fresh child.

The time limit is on progress, not on the whole file: a PDF reports each page it has read,
and each report gives the child another ``timeout`` seconds, so a 400-page report is never
refused for being long. Inside the child each PDF page has its own alarm of ``timeout``
seconds (a page over it is skipped with a warning, see pdf.py); the parent's watchdog waits
a little longer than that and kills the child only when nothing moves at all.

The child is a plain ``python -m ragcli.ingest.worker`` started through subprocess, never a
fork: forking after chromadb or llama.cpp have loaded threads is unsafe. It is reused
across files, because starting Python and importing pypdf costs ~0.3 s a time.

Protocol: one JSON line per request on stdin; on a private copy of stdout (fd 1 itself is
pointed at stderr, so a stray print cannot corrupt the replies) zero or more progress lines
``{"progress": [done, total]}`` and then one reply line.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from ..children import child_env
from ..types import Document, Section
from .errors import ParseError, failure_reason
from .obsidian import NoteResolver
from .pdf import OUT_OF_MEMORY, PdfLimits
from .read import read_and_parse


# ---------------------------------------------------------------- child side


def _child_main(memory_mb: int, timeout: float) -> None:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    _preload()
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    limits = PdfLimits(memory_mb=memory_mb, page_timeout=timeout if timeout > 0 else None)
    out_of_memory = {"ok": False, "error": f"ran out of memory (limit {memory_mb} MB)", "fatal": True}

    def on_page(done: int, total: int) -> None:
        out.write(json.dumps({"progress": [done, total]}) + "\n")
        out.flush()

    for line in sys.stdin:
        try:
            request = json.loads(line)
            doc = _handle(request, limits, on_page)
            reply = {"ok": True, "doc": asdict(doc)}
            if any(OUT_OF_MEMORY in w for w in doc.warnings):
                reply["fatal"] = True  # a page hit the limit: the next file gets a fresh heap
        except MemoryError:
            reply = out_of_memory
        except Exception as exc:  # noqa: BLE001 - the parent turns any failure into a reason for this file
            reply = {"ok": False, "error": failure_reason(exc)}
        try:
            out.write(json.dumps(reply) + "\n")
            out.flush()
        except MemoryError:
            out.write(json.dumps(out_of_memory) + "\n")
            out.flush()
        if reply.get("fatal"):
            return  # after a MemoryError the heap may be in a bad state: start afresh


def _preload() -> None:
    # Imports happen before the memory limit, so the limit measures parsing alone.
    import pypdf  # noqa: F401

    from . import markdown, pdf  # noqa: F401
    with contextlib.suppress(ImportError):
        import cryptography.hazmat.primitives.ciphers  # noqa: F401  (AES for encrypted PDFs)


def _handle(request: dict, limits: PdfLimits, on_page) -> Document:
    resolver = NoteResolver.from_dict(request["resolver"]) if request.get("resolver") else None
    return read_and_parse(Path(request["path"]), request["max_bytes"], resolver, limits, on_page)


def doc_from_dict(data: dict) -> Document:
    sections = [Section(tuple(s["heading_path"]), s["text"], s["line_start"], s["line_end"], s["page"])
                for s in data.pop("sections")]
    for key in ("tags", "aliases", "links", "embeds"):
        data[key] = tuple(data.get(key) or ())
    return Document(sections=sections, **data)


# ---------------------------------------------------------------- parent side


class Worker:
    """The parent's handle on one child; restarts it after a timeout, crash or memory kill."""

    def __init__(self, timeout: float, memory_mb: int):
        self.timeout = timeout
        self.memory_mb = memory_mb
        # The child's own page alarm fires first; the watchdog gives it a moment more.
        self.watchdog = timeout + max(2.0, timeout / 4)
        self.proc: subprocess.Popen | None = None
        self.started = 0  # how many children were started (for tests and the bench)
        self._buffer = b""

    def _start(self) -> subprocess.Popen:
        self.started += 1
        return subprocess.Popen(
            [sys.executable, "-m", "ragcli.ingest.worker", str(self.memory_mb), str(self.timeout)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=child_env(), start_new_session=True)  # Ctrl-C in a terminal goes to the parent only

    def parse(self, path: Path, max_bytes: int, resolver_dict: dict | None = None) -> Document:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
            self._buffer = b""
        request = {"path": str(path), "max_bytes": max_bytes, "resolver": resolver_dict}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            reply = self._read_reply()
        except BrokenPipeError:
            reply = None
        if reply is None:
            raise ParseError(self._why_gone())
        if reply.get("fatal"):
            self.close()
        if not reply["ok"]:
            raise ParseError(reply["error"])
        return doc_from_dict(reply["doc"])

    def _read_reply(self) -> dict | None:
        """The reply to the request just sent; each progress line moves the deadline on.
        None when the child died."""
        deadline = time.monotonic() + self.watchdog
        while True:
            line = self._read_line(deadline)
            if line is None:
                return None
            message = json.loads(line)
            if "progress" not in message:
                return message
            deadline = time.monotonic() + self.watchdog

    def _read_line(self, deadline: float) -> bytes | None:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise ParseError(f"timed out after {self.timeout:g}s (set parse_timeout to allow longer)")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            data = os.read(fd, 1 << 20)
            if not data:
                return None  # the child died
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _why_gone(self) -> str:
        proc, self.proc = self.proc, None
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS) or code == 1:
            name = signal.Signals(-code).name if code < 0 else f"exit {code}"
            return f"parser crashed ({name}); it may have run out of memory (limit {self.memory_mb} MB)"
        return f"parser crashed (exit {code})"

    def close(self) -> None:
        proc, self.proc = self.proc, None
        self._buffer = b""
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()


if __name__ == "__main__":
    _child_main(int(sys.argv[1]) if len(sys.argv) > 1 else 0,
                float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
