"""A long-lived child process that parses files under a time and a memory limit.

One bad file (a PDF decompression bomb, a pathological note) can then neither hang nor
crash the indexing run: the parent kills the child on timeout, the child's RLIMIT_AS turns
a memory blow-up into MemoryError (or a crash), and the next file gets a fresh child.

The child is a plain ``python -m ragcli.ingest.worker`` started through subprocess, never a
fork: forking after chromadb or llama.cpp have loaded threads is unsafe. It is reused
across files, because starting Python and importing pypdf costs ~0.3 s a time.

Protocol: one JSON line per request on stdin, one JSON line per reply on a private copy of
stdout (fd 1 itself is pointed at stderr, so a stray print cannot corrupt the replies).
"""

from __future__ import annotations

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

from ..types import Document, Section
from .errors import ParseError
from .obsidian import NoteResolver
from .read import read_and_parse

_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


# ---------------------------------------------------------------- child side


def _child_main(memory_mb: int) -> None:
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    _preload()
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = {"ok": True, "doc": _doc_to_dict(_handle(request))}
        except ParseError as exc:
            reply = {"ok": False, "error": str(exc)}
        except MemoryError:
            reply = {"ok": False, "error": f"ran out of memory (limit {memory_mb} MB)", "fatal": True}
        except RecursionError:
            reply = {"ok": False, "error": "too deeply nested to parse"}
        except Exception as exc:  # the parent turns any failure into a reason for this file
            reply = {"ok": False, "error": f"parser failed: {type(exc).__name__}: {str(exc)[:120]}"}
        try:
            out.write(json.dumps(reply) + "\n")
            out.flush()
        except MemoryError:
            out.write(json.dumps({"ok": False, "error": f"ran out of memory (limit {memory_mb} MB)",
                                  "fatal": True}) + "\n")
            out.flush()
        if reply.get("fatal"):
            return  # after a MemoryError the heap may be in a bad state: start afresh


def _preload() -> None:
    # Imports happen before the memory limit, so the limit measures parsing alone.
    import pypdf  # noqa: F401

    from . import markdown, pdf  # noqa: F401
    try:
        import cryptography.hazmat.primitives.ciphers  # noqa: F401  (AES for encrypted PDFs)
    except ImportError:
        pass


def _handle(request: dict) -> Document:

    resolver = NoteResolver.from_dict(request["resolver"]) if request.get("resolver") else None
    return read_and_parse(Path(request["path"]), request["max_bytes"], resolver)


def _doc_to_dict(doc: Document) -> dict:
    return asdict(doc)


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
        self.proc: subprocess.Popen | None = None
        self.started = 0  # how many children were started (for tests and the bench)

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        env["PYTHONPATH"] = _PACKAGE_PARENT + os.pathsep + env.get("PYTHONPATH", "")
        self.started += 1
        return subprocess.Popen(
            [sys.executable, "-m", "ragcli.ingest.worker", str(self.memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, start_new_session=True)  # Ctrl-C in a terminal goes to the parent only

    def parse(self, path: Path, max_bytes: int, resolver_dict: dict | None = None) -> Document:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        request = {"path": str(path), "max_bytes": max_bytes, "resolver": resolver_dict}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            line = self._read_line(time.monotonic() + self.timeout)
        except BrokenPipeError:
            line = None
        if line is None:
            raise ParseError(self._why_gone())
        reply = json.loads(line)
        if reply.get("fatal"):
            self.close()
        if not reply["ok"]:
            raise ParseError(reply["error"])
        return doc_from_dict(reply["doc"])

    def _read_line(self, deadline: float) -> bytes | None:
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise ParseError(f"timed out after {self.timeout:g}s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            data = os.read(fd, 1 << 20)
            if not data:
                return None  # the child died
            buf += data
            if buf.endswith(b"\n"):
                return bytes(buf)

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
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


if __name__ == "__main__":
    _child_main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
