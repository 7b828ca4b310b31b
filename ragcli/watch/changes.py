"""From file-system events to debounced paths to sync.

The observer's thread feeds events in; the daemon's main thread blocks on ``wait`` and
takes the paths whose quiet period is over. Nothing here polls: the main thread sleeps on
a condition until the next deadline, an event, or a wake-up (a signal).

Which events matter is decided on names alone, here, so that editor noise (vim's
``.swp``/``4913``/``note.md~``, emacs' ``.#note.md``, ``*.tmp``, hidden folders such as
``.obsidian`` and ``.git``, the index's own folder) never wakes the indexer. The final
verdict (``.ragignore``, symlinks, special files) is ``classify``'s, at sync time, so the
watcher follows exactly the rules of ``rag index``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..ingest.discover import IGNORE_FILE, is_candidate, root_of

# Events that say nothing about content. "closed" follows a write we already saw as
# "modified"; folder "modified" fires on every change of a child and would turn each save
# into a walk of the whole folder.
_QUIET_TYPES = frozenset({"opened", "closed", "closed_no_write"})


class Relevance:
    """Decides from a path's name whether an event on it may change the index."""

    def __init__(self, roots: Sequence[Path], exclude: Iterable[Path] = ()):
        self.roots = [Path(os.path.abspath(r)) for r in roots]
        self.exclude = [os.path.realpath(p).rstrip(os.sep) + os.sep for p in exclude] + \
                       [os.path.abspath(p).rstrip(os.sep) + os.sep for p in exclude]

    def root(self, path: str) -> Path | None:
        return root_of(Path(path), self.roots)

    def is_ignore_file(self, path: str) -> bool:
        """A root's .ragignore: its change can add or drop any file below that root."""
        p = Path(path)
        return p.name == IGNORE_FILE and p.parent in self.roots

    def matters(self, path: str, is_dir: bool) -> bool:
        root = self.root(path)
        if root is None:
            return False
        if any((path + os.sep).startswith(ex) for ex in self.exclude):
            return False
        rel = os.path.relpath(path, root)
        if rel != "." and any(part.startswith(".") for part in rel.split(os.sep)):
            return False  # hidden file or folder, or something inside one (.obsidian, .git, .#x)
        return is_dir or is_candidate(path)


def event_paths(event, relevance: Relevance) -> tuple[list[str], bool]:
    """The paths an event asks us to look at again, and whether it asks for a full reconcile.

    A move yields both ends: the old path must leave the index, the new one enter it (an
    atomic save is a move of a temp file over the note; only the note's end matters).
    """
    if event.event_type in _QUIET_TYPES:
        return [], False
    if event.is_directory and event.event_type == "modified":
        return [], False
    ends = [event.src_path]
    if event.event_type == "moved":
        ends.append(event.dest_path)
    paths, reconcile = [], False
    for end in ends:
        end = os.fsdecode(end)
        if relevance.is_ignore_file(end):
            reconcile = True
        elif relevance.matters(end, event.is_directory):
            paths.append(end)
    return paths, reconcile


class PendingChanges:
    """Paths waiting for their quiet period (debounce), shared between two threads.

    Each event on a path pushes its due time to ``now + debounce``; a path that keeps
    changing is still synced after ``max_delay`` (a log-like file must not starve).
    """

    def __init__(self, debounce: float, max_delay: float | None = None):
        self.debounce = max(0.0, debounce)
        self.max_delay = max_delay if max_delay is not None else max(10.0, 10 * self.debounce)
        self._cond = threading.Condition()
        self._due: dict[str, float] = {}
        self._first: dict[str, float] = {}
        self._reconcile = False
        self._woken = False
        self._wake_at: float | None = None
        self.events = 0  # events that asked for work (for the state file and the bench)

    def add(self, path: str, delay: float | None = None, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        wait = self.debounce if delay is None else delay
        with self._cond:
            first = self._first.setdefault(path, now)
            self._due[path] = max(now, min(now + wait, first + max(self.max_delay, wait)))
            self.events += 1
            self._cond.notify_all()

    def request_reconcile(self) -> None:
        with self._cond:
            self._reconcile = True
            self._cond.notify_all()

    def wake(self) -> None:
        """Make ``wait`` return now (a signal arrived, or the state must be written)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def add_wakeup(self, at: float) -> None:
        """Make ``wait`` return at ``at`` (monotonic) even if nothing happens."""
        with self._cond:
            self._wake_at = at if self._wake_at is None else min(self._wake_at, at)
            self._cond.notify_all()

    def wait(self, until: float) -> None:
        """Block until a path is due, a reconcile or wake-up is asked for, or ``until``."""
        with self._cond:
            while not self._woken and not self._reconcile:
                now = time.monotonic()
                deadline = min([until, *self._due.values()] +
                               ([self._wake_at] if self._wake_at is not None else []))
                if deadline <= now:
                    if self._wake_at is not None and self._wake_at <= now:
                        self._wake_at = None
                    break
                before = self.events
                self._cond.wait(deadline - now)
                if self.events != before:
                    break  # new work: let the caller refresh what it shows (pending count)
            self._woken = False

    def take_due(self, now: float | None = None) -> list[str]:
        now = time.monotonic() if now is None else now
        with self._cond:
            due = sorted(p for p, t in self._due.items() if t <= now)
            for p in due:
                del self._due[p]
                self._first.pop(p, None)
            return due

    def take_reconcile(self) -> bool:
        with self._cond:
            asked, self._reconcile = self._reconcile, False
            return asked

    def __len__(self) -> int:
        with self._cond:
            return len(self._due)
