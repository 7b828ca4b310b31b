"""One writer per index: an advisory lock that dies with its process.

``flock`` is released by the kernel when the holder exits, even after ``kill -9``, so a
crash never leaves a stale lock that needs a manual fix. The lock file also records who
holds it, so the refused process can name the holder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path

from ..errors import LockedError


class WriteLock:
    def __init__(self, path: Path, role: str):
        self.path = path
        self.role = role
        self.fd: int | None = None

    def acquire(self, wait: float = 0.0) -> "WriteLock":
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = read_holder(self.path)
                    os.close(fd)
                    raise _locked_error(holder) from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "role": self.role, "since": time.time(),
                                 "argv": sys.argv[:6]}).encode())
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
            finally:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
                self.fd = None

    def __enter__(self) -> "WriteLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def read_holder(path: Path) -> dict | None:
    """Who holds the lock, or None when nobody does (checked with a real lock attempt)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        with contextlib.suppress(BlockingIOError):
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        raw = os.read(fd, 4096)
        try:
            return json.loads(raw) if raw else {"pid": None, "role": "unknown"}
        except json.JSONDecodeError:
            return {"pid": None, "role": "unknown"}
    finally:
        os.close(fd)


def _locked_error(holder: dict | None) -> LockedError:
    holder = holder or {}
    pid, role = holder.get("pid"), holder.get("role", "another process")
    since = holder.get("since")
    when = time.strftime(" since %H:%M:%S", time.localtime(since)) if since else ""
    who = f"`rag {role}` (pid {pid}{when})" if pid else "another ragcli process"
    if role == "watch":
        hint = ("The watcher keeps the index in sync by itself; nothing to do. To index now "
                f"anyway, stop it first: rag watch --stop (or kill {pid}).")
    else:
        hint = f"Wait for it to finish, or stop it (kill {pid})." if pid else "Wait for it to finish."
    return LockedError(f"the index is being written by {who}", hint=hint)
