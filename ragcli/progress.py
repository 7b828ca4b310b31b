"""One shape for progress: stage functions report ``Progress`` events through one callback.

Stage functions never print. They call ``report(progress, ...)`` or ``say(progress, ...)``
with whatever callback the caller gave (or None), and ``render.progress_reporter`` turns
the events into a bar and lines on stderr (only on a terminal for the bar).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """How far a counted task has got, or a line to tell the user (``message``)."""

    task: str = ""  # what is being counted: "Indexing", "Embedding", "Queries" ...
    done: int = 0
    total: int | None = None  # None while unknown
    note: str = ""  # shown beside the bar, e.g. "1234 chunks"
    message: str = ""  # a line for the user instead of a count ("Converting ...")
    item: str = ""  # what was just done (a file's path), for logs
    # The same progress in units of work (bytes) when the items differ in size: the time left
    # is estimated from these. Replayed on MDN's first index (14,235 notes, 65 min), the time
    # left counted in files was off by a median 40% (worst 132%), in bytes by 6% (worst 45%):
    # bench/eta_replay.py.
    work_done: int = 0
    work_total: int | None = None


ProgressFn = Callable[[Progress], None]


def report(progress: ProgressFn | None, task: str, done: int, total: int | None, note: str = "",
           item: str = "", work_done: int = 0, work_total: int | None = None) -> None:
    if progress is not None:
        progress(Progress(task=task, done=done, total=total, note=note, item=item, work_done=work_done,
                          work_total=work_total))


def say(progress: ProgressFn | None, message: str) -> None:
    if progress is not None:
        progress(Progress(message=message))
