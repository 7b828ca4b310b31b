"""The files a running watcher keeps in the index folder:

- ``watch.json``: its state (pid, since, roots, pending...), for `rag status` and `--detach`;
- ``watch.pid``: its pid, a plain number (``kill $(cat watch.pid)`` works), 0600, removed
  when it stops; the write lock (``write.lock``) stays the authority on whether it runs;
- ``watch.sock``: its socket (``serve.protocol.SOCKET_NAME``);
- ``watch.log`` (+ ``.1`` ... ``.3``): the background watcher's log, rotated at 1 MB;
- ``watch.out``: the background watcher's stdout and stderr (a start-up error, a crash);
- ``watch.exit``: how the last watcher ended, ``{"pid", "code", "at"}``, for `rag watch --stop`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from ..config import Config, write_private

STATE_NAME = "watch.json"
PID_NAME = "watch.pid"
LOG_NAME = "watch.log"
OUT_NAME = "watch.out"
EXIT_NAME = "watch.exit"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3


def write_pid(config: Config) -> None:
    write_private(config.index_dir / PID_NAME, f"{os.getpid()}\n")


def read_pid(config: Config) -> int | None:
    try:
        return int((config.index_dir / PID_NAME).read_text().strip())
    except (OSError, ValueError):
        return None


def remove_pid(config: Config) -> None:
    if read_pid(config) == os.getpid():
        with contextlib.suppress(OSError):
            (config.index_dir / PID_NAME).unlink()


def write_exit(config: Config, code: int) -> None:
    with contextlib.suppress(OSError):
        write_private(config.index_dir / EXIT_NAME, json.dumps({"pid": os.getpid(), "code": code, "at": time.time()}))


def read_exit(config: Config) -> dict | None:
    return _read_json(config.index_dir / EXIT_NAME)


def read_state(config: Config) -> dict | None:
    return _read_json(config.index_dir / STATE_NAME)


def _read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None
