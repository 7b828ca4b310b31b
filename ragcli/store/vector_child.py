"""The local vector store opened in a child process, for a writer that will exit soon.

Chroma holds the GIL while it imports (0.5 s, pure Python) and while a collection's first
use loads its index (0.5 s at 168k chunks: the Rust binding never lets go of it). Opened on
a thread, that second stalls every other thread of the writer: `rag index` after one edit
in a 14k-note vault spent ~1 s of its ~2 s waiting on it. In a child process it runs on
another core while the writer walks the folders, parses and embeds; the writer then sends
its few writes over a pipe.

The child is a plain ``python -m ragcli.store.vector_child`` (never a fork: the writer may
have threads). It dies with its parent (PR_SET_PDEATHSIG where Linux offers it; elsewhere it
leaves when the pipe closes), sits in its own session so that a terminal's Ctrl-C reaches
only the writer (which decides what an interrupt means), and answers one request at a
time, so every write has finished when its reply is read: the write protocol (the
manifest's journal, ``vectors_dirty``) is the writer's, as before.

Protocol: length-prefixed pickles. The child's first message says it is ready (or why the
store did not open); then one reply per request ``(method, args)``.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..children import child_env
from ..errors import StoreError
from .vectors import paged

_HEADER = struct.Struct("!Q")
# what the parent may ask: the VectorStore protocol, pages one at a time
METHODS = frozenset({"upsert", "delete", "query", "ids", "page_at", "count", "reset"})
CLOSE_WAIT = 30.0  # seconds for the child to leave after the pipe closes (it holds no write)


def _send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    """The next message, or EOFError when the other side is gone."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    size = _HEADER.unpack(header)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # noqa: S301 - our own child or parent, over a private pipe


class ChildStore:
    """A ``VectorStore`` whose Chroma lives in a child process (see the module's text)."""

    def __init__(self, path: Path, lock_fd: int | None = None):
        """``lock_fd``: the writer's lock (``store.lock``), held by the child too, so that a
        killed writer's lock is free only once its child is gone as well."""
        self.path = path
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "ragcli.store.vector_child", str(path), str(os.getpid())],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env(ANONYMIZED_TELEMETRY="False"),
            pass_fds=() if lock_fd is None else (lock_fd,),
            start_new_session=True)  # a terminal's Ctrl-C reaches the writer, which decides
        self._ready = False
        self._asked = False

    def _call(self, method: str, *args):
        self._asked = True
        with _interrupt_after():
            if not self._ready:
                self._reply()  # the child's first message: the store opened (or why not)
                self._ready = True
            try:
                _send(self._proc.stdin, (method, args))
            except (BrokenPipeError, OSError):
                pass  # the child is gone: _reply says so
            return self._reply()

    def _reply(self):
        try:
            status, payload = _receive(self._proc.stdout)
        except (EOFError, OSError):
            code = self._proc.wait()
            raise StoreError(f"{self.path}: the process holding the vector store ended (exit {code})",
                             hint="Run the command again; the next run finishes what this one began.") from None
        if status == "error":
            message, hint = payload
            raise StoreError(message, hint=hint)
        return payload

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, paths: Sequence[str]) -> None:
        self._call("upsert", list(ids), np.asarray(vectors, dtype=np.float32), list(paths))

    def delete(self, ids: Sequence[str]) -> None:
        self._call("delete", list(ids))

    def query(self, vector: np.ndarray, k: int, paths: Sequence[str] | None = None) -> list[tuple[str, float]]:
        return self._call("query", np.asarray(vector, dtype=np.float32), k,
                          None if paths is None else list(paths))

    def ids(self) -> set[str]:
        return self._call("ids")

    def pages(self, size: int = 2000):
        return paged(lambda offset, n: self._call("page_at", offset, n), size)

    def count(self) -> int:
        return self._call("count")

    def reset(self) -> None:
        self._call("reset")

    def close(self) -> None:
        """Let the child go (every write it was asked for has been answered) and wait for it,
        so that no other writer opens the folder while it still has it open. A child never
        asked anything is killed: it has only opened and read the store, as any reader that
        is killed has (a `rag index` that found nothing to write does not wait for it)."""
        if not self._asked:
            self._proc.kill()
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=CLOSE_WAIT)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class _interrupt_after:
    """Ctrl-C during a request takes effect once its reply is in: a write in process could not
    be cut half-way either (Chroma's Rust call runs to its end), and a reply half-read would
    leave the pipe out of step. Main thread only (where Python delivers signals)."""

    def __enter__(self):
        self.caught = False
        self.installed = threading.current_thread() is threading.main_thread()
        if self.installed:
            self.previous = signal.signal(signal.SIGINT, self._note)
        return self

    def _note(self, signum, frame) -> None:
        self.caught = True

    def __exit__(self, *exc) -> None:
        if not self.installed:
            return
        signal.signal(signal.SIGINT, self.previous)
        if self.caught:  # the user asked to stop: that wins over how the request ended
            if callable(self.previous):
                self.previous(signal.SIGINT, None)
            elif self.previous in (signal.SIG_DFL, None):
                raise KeyboardInterrupt


# ---------------------------------------------------------------- child side


def _die_with_parent(parent: int) -> None:
    """SIGKILL when the parent dies, as a thread would (Linux); elsewhere the closed pipe."""
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before the line above: nobody to serve
        os._exit(0)


def _child_main(path: Path, parent: int) -> None:
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to stderr, never into the replies
    inp = os.fdopen(os.dup(0), "rb")
    from .vectors import ChromaStore

    try:
        store = ChromaStore.persistent(path)
        store.count()  # the collection's first use loads its index: now, not at the first write
    except StoreError as exc:
        _reply_or_leave(out, ("error", (str(exc), exc.hint)))
        os._exit(0)
    _reply_or_leave(out, ("ok", None))
    while True:
        try:
            method, args = _receive(inp)
        except EOFError:
            os._exit(0)  # Chroma writes nothing at exit; each write was finished when answered
        _reply_or_leave(out, _answer(store, path, method, args))


def _answer(store, path: Path, method: str, args: tuple) -> tuple:
    try:
        if method not in METHODS:
            raise StoreError(f"unknown vector store request {method!r}")
        return "ok", getattr(store, method)(*args)
    except StoreError as exc:
        return "error", (str(exc), exc.hint)
    except Exception as exc:  # noqa: BLE001 - the parent turns it into a StoreError
        return "error", (f"{path}: vector store {method} failed: {type(exc).__name__}: {exc}", StoreError.hint)


def _reply_or_leave(out, message) -> None:
    try:
        _send(out, message)
    except OSError:  # the parent is gone
        os._exit(0)


if __name__ == "__main__":
    _child_main(Path(sys.argv[1]), int(sys.argv[2]))
