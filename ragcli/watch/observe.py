"""Starting watchdog's observer, and falling back to polling when inotify runs out.

inotify needs one watch per folder, and the per-user limit (``fs.inotify.max_user_watches``)
is easily exhausted by a big vault, a ``node_modules`` or another watcher. watchdog raises
ENOSPC only when the root itself cannot be watched; for sub-folders it drops the error and
leaves them silently unwatched. So after starting we also count what the kernel actually
watches (``/proc/self/fdinfo``) against the folders below the roots, and fall back to
``PollingObserver`` when some are missing.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

log = logging.getLogger("ragcli.watch")

LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE)
FIX_WATCHES = "sudo sysctl fs.inotify.max_user_watches=524288"
FIX_INSTANCES = "sudo sysctl fs.inotify.max_user_instances=1024"
POLL_SECONDS = 1.0


def make_handler(on_event: Callable):
    """A watchdog handler that forwards every event to ``on_event`` (in the observer thread)."""
    from watchdog.events import FileSystemEventHandler

    class _Forward(FileSystemEventHandler):
        def dispatch(self, event) -> None:
            try:
                on_event(event)
            except Exception:  # an odd event must never kill the observer thread
                log.exception("could not handle a file event")

    return _Forward()


def start_observer(roots: Sequence[Path], handler, polling: bool = False):
    """Start watching ``roots``; returns (observer, kind) with kind "native" or "polling"."""
    if not polling:
        try:
            return _start(roots, handler, polling=False), "native"
        except OSError as exc:
            if exc.errno not in LIMIT_ERRNOS:
                raise
            warn_limit(exc)
    return _start(roots, handler, polling=True), "polling"


def _start(roots: Sequence[Path], handler, polling: bool):
    if polling:
        from watchdog.observers.polling import PollingObserver

        observer = PollingObserver(timeout=POLL_SECONDS)
    else:
        from watchdog.observers import Observer

        observer = Observer()
    try:
        for root in roots:
            observer.schedule(handler, str(root), recursive=True, event_filter=_wanted_events())
        observer.start()
    except BaseException:
        stop_observer(observer)
        raise
    return observer


def _wanted_events() -> list:
    """The events that can change the index. Without a filter watchdog also asks inotify for
    every open and close of a folder, and walking a big vault (our reconcile, or watchdog's own
    after a queue overflow) opens every folder: on MDN's 14,238 folders that overflowed the
    kernel's queue, watchdog walked again to recover, and the idle watcher spun a whole core."""
    from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileCreatedEvent,
                                 FileDeletedEvent, FileModifiedEvent, FileMovedEvent)

    return [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent,
            DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


def stop_observer(observer, timeout: float = 2.0) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout)
    except Exception:  # stopping is best effort; the process is ending
        log.debug("observer did not stop cleanly", exc_info=True)


def warn_limit(exc: OSError | None = None, missing: int = 0) -> None:
    if exc is not None and exc.errno == errno.EMFILE:
        log.warning("inotify instance limit reached (%s); falling back to polling every %gs. "
                    "Fix: %s", exc.strerror, POLL_SECONDS, FIX_INSTANCES)
        return
    what = f"{missing} folder(s) could not be watched" if missing else "inotify watch limit reached"
    log.warning("%s (fs.inotify.max_user_watches=%s); falling back to polling every %gs, which "
                "costs more CPU on big vaults. Fix: %s (make it permanent in /etc/sysctl.d/), "
                "then restart rag watch.", what, _watch_limit(),
                POLL_SECONDS, FIX_WATCHES)


def _watch_limit() -> str:
    """The effective per-user watch limit: the sysctl, or a lower one of this user namespace."""
    values = [_read_int(p) for p in ("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches")]
    numbers = [int(v) for v in values if v.isdigit()]
    return str(min(numbers)) if numbers else "?"


def unwatched_folders(roots: Sequence[Path]) -> int | None:
    """How many folders below the roots inotify does not watch (None: cannot tell here).

    Compares the (device, inode) of every folder watchdog would watch with the watches
    this process holds, as the kernel lists them in /proc/self/fdinfo.
    """
    if not sys.platform.startswith("linux"):
        return None
    watched = _inotify_watches()
    if watched is None:
        return None
    wanted: set[tuple[int, int]] = set()
    for root in roots:
        for folder, dirs, _files in os.walk(root):
            try:
                st = os.stat(folder)
            except OSError:
                continue
            wanted.add((st.st_dev, st.st_ino))
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    return len({ino for _dev, ino in wanted} - {ino for _dev, ino in watched})


def _inotify_watches() -> set[tuple[int, int]] | None:
    """(device, inode) of every inotify watch this process holds."""
    found: set[tuple[int, int]] = set()
    try:
        fds = os.listdir("/proc/self/fdinfo")
    except OSError:
        return None
    for fd in fds:
        try:
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                text = fh.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("inotify wd:"):
                fields = dict(part.split(":", 1) for part in line.split()[1:] if ":" in part)
                try:
                    found.add((int(fields.get("sdev", "0"), 16), int(fields["ino"], 16)))
                except (KeyError, ValueError):
                    continue
    return found


def _read_int(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return "?"
