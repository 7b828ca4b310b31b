"""`rag watch --detach`, `--stop`, `--status`: the watcher as a background process.

Detaching re-executes ``python -m ragcli.cli watch --background ...`` in a new session
(``start_new_session``: no controlling terminal and its own process group, so closing the
terminal, which sends SIGHUP to the terminal's session, never reaches it), from ``/``,
with stdin from /dev/null, stdout and stderr into ``watch.out`` and its log into the
rotated ``watch.log``, both in the index folder. ``watch.out`` is kept apart from the log
because a rotation renames the log under a descriptor that would keep writing to the old
file. The launcher returns once the child holds the write lock and has begun (its socket
is bound by then), or reports the child's own error with the child's exit code.

Stopping sends SIGTERM to the process that holds the write lock as ``rag watch`` (the lock,
not the pid file, says who runs: it dies with its process) and waits until that process
has exited, then reports the exit code the watcher recorded (``watch.exit``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..children import child_env
from ..config import Config, ensure_private_dir
from ..errors import ExitCode, LockedError, RagError
from ..store import LOCK_NAME, read_holder
from .files import LOG_BACKUPS, LOG_BYTES, LOG_NAME, OUT_NAME, read_exit, read_state

START_WAIT = 120.0  # seconds the launcher waits for the child to take the lock and begin
STOP_WAIT = 60.0  # seconds `--stop` waits by default (a write in hand is finished first)
_FORMAT = ("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")


def start_detached(config: Config, roots: Sequence[Path], args: Sequence[str] = (),
                   wait: float = START_WAIT) -> dict:
    """Start the watcher in the background; returns {"pid", "log", "out", "socket", "starting"}."""
    _refuse_if_running(config)
    ensure_private_dir(config.data_dir)
    ensure_private_dir(config.index_dir)
    out = config.index_dir / OUT_NAME
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    argv = [sys.executable, "-m", "ragcli.cli", "watch", "--background", *args,
            *[os.path.abspath(r) for r in roots]]
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, cwd="/",
                                env=child_env(), start_new_session=True, close_fds=True)
    finally:
        os.close(fd)
    starting = not _wait_started(config, proc, wait)
    from ..serve.client import daemon_status

    live = daemon_status(config, timeout=2.0)
    proc.returncode = 0  # not ours to wait for: it outlives this process (and Popen must not warn)
    return {"pid": proc.pid, "log": str(config.index_dir / LOG_NAME), "out": str(out),
            "socket": (live or {}).get("socket"), "starting": starting}


def _refuse_if_running(config: Config) -> None:
    holder = read_holder(config.index_dir / LOCK_NAME)
    if not holder:
        return
    pid, role = holder.get("pid"), holder.get("role")
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder.get("since") or 0))
    if role == "watch":
        raise LockedError(f"a watcher is already running (pid {pid}, since {since})",
                          hint="See it with: rag watch --status; stop it with: rag watch --stop")
    raise LockedError(f"the index is being written by `rag {role}` (pid {pid}, since {since})",
                      hint="Start the watcher when it has finished.")


def _wait_started(config: Config, proc: subprocess.Popen, wait: float) -> bool:
    """True once the child holds the lock and has written its state (its socket is bound by
    then); False if still starting after ``wait``; raises the child's error if it exited."""
    deadline = time.monotonic() + wait
    while True:
        code = proc.poll()
        if code is not None:
            raise _start_failed(config, code)
        if (read_state(config) or {}).get("pid") == proc.pid:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _start_failed(config: Config, code: int) -> RagError:
    out = config.index_dir / OUT_NAME
    try:
        lines = [x.strip() for x in out.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        lines = []
    error = next((x[7:] for x in reversed(lines) if x.startswith("Error: ")), None)
    hint = next((x[6:] for x in reversed(lines) if x.startswith("Hint: ")), None)
    if code == ExitCode.LOCKED:
        return LockedError(error or "another process holds the index's write lock", hint=hint)
    exc = RagError(f"the background watcher ended at start (exit code {code}): "
                   f"{error or (lines[-1] if lines else 'no message')}",
                   hint=hint or f"See {out} and {config.index_dir / LOG_NAME}")
    exc.exit_code = code if 0 < code < 256 else ExitCode.UNEXPECTED
    return exc


# -- stopping -------------------------------------------------------------------------------


def stop_watcher(config: Config, timeout: float = STOP_WAIT) -> dict:
    """SIGTERM to the running watcher, then wait for its exit.

    Returns {"stopped": pid or None, "code": its recorded exit code, "seconds"}; raises when it
    does not end within ``timeout`` or ended with a failure."""
    holder = read_holder(config.index_dir / LOCK_NAME) if config.index_dir.is_dir() else None
    if not holder or holder.get("role") != "watch" or not holder.get("pid"):
        return {"stopped": None, "code": None, "seconds": 0.0, "writer": holder}
    pid = int(holder["pid"])
    started = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    while _alive(pid):
        if time.monotonic() - started > timeout:
            raise RagError(f"the watcher (pid {pid}) did not stop within {timeout:g}s",
                           hint=f"It may be finishing a write: wait, or end it with `kill -9 {pid}` "
                                "(the next start recovers the index).")
        time.sleep(0.1)
    record = read_exit(config)
    code = record.get("code") if record and record.get("pid") == pid else None
    result = {"stopped": pid, "code": code, "seconds": round(time.monotonic() - started, 3), "writer": None}
    if code not in (None, 0):
        exc = RagError(f"the watcher (pid {pid}) stopped with exit code {code}",
                       hint=f"See its log: {config.index_dir / LOG_NAME}")
        exc.exit_code = ExitCode.UNEXPECTED
        raise exc
    return result


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie has exited; only its parent's wait is missing
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


# -- logging --------------------------------------------------------------------------------


def setup_logging(config: Config, verbose: bool, log_file: Path | None = None,
                  background: bool = False) -> str | None:
    """Route the watcher's log: stderr (foreground, for journald) and/or a file; the background
    watcher writes the rotated ``watch.log`` only. Returns the log file in use, if any."""
    from logging.handlers import RotatingFileHandler

    fmt = logging.Formatter(*_FORMAT)
    handlers: list[logging.Handler] = []
    path = None
    if background:
        path = config.index_dir / LOG_NAME
        ensure_private_dir(config.index_dir)
        handlers.append(RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS,
                                            encoding="utf-8"))
        os.chmod(path, 0o600)
    else:
        handlers.append(logging.StreamHandler(sys.stderr))
        if log_file is not None:
            path = log_file.expanduser()
            path.parent.mkdir(parents=True, exist_ok=True)
            handlers.append(logging.FileHandler(path, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(fmt)
    for name, level in (("ragcli", logging.DEBUG if verbose else logging.INFO), ("watchdog", logging.WARNING)):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        for handler in handlers:
            logger.addHandler(handler)
        logger.propagate = False
    return str(path) if path else None
