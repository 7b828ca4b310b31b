"""Everything that prints: rich on a terminal, plain text or JSON otherwise.

stdout carries results only; progress, logs and errors go to stderr. Text that comes
from notes or from a model is passed through ``clean`` first so a note cannot drive the
user's terminal (escape sequences, OSC 52 clipboard writes, OSC 8 links).
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from typing import Any

# CSI / OSC / other ESC sequences, then any remaining C0/C1 control character except \n and \t.
_ESCAPE_SEQ = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST (or unterminated)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"    # DCS, SOS, PM, APC strings
    r"|\x1b[@-Z\\-_]"                    # other two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"            # 8-bit CSI
    r"|\x9d[^\x07\x9c]*(?:\x07|\x9c)?"   # 8-bit OSC
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Strip terminal control sequences and control characters, keeping newlines and tabs."""
    if not text:
        return text
    return _CONTROL.sub("", _ESCAPE_SEQ.sub("", text.replace("\r\n", "\n")))


def _colour_allowed(stream) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR")


@lru_cache(maxsize=None)
def out():
    """Console for results (stdout)."""
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, soft_wrap=True,
                   no_color=not _colour_allowed(sys.stdout), emoji=False, markup=False)


@lru_cache(maxsize=None)
def err():
    """Console for progress, warnings and errors (stderr)."""
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False, soft_wrap=True,
                   no_color=not _colour_allowed(sys.stderr), emoji=False, markup=False)


def reset_consoles() -> None:
    """Forget cached consoles (CliRunner swaps sys.stdout between invocations)."""
    out.cache_clear()
    err.cache_clear()


_C1 = re.compile(r"[\x80-\x9f]")


def to_json(obj: Any) -> str:
    """JSON text that is safe on a terminal: json escapes C0 controls but not C1 ones
    (U+009B acts as CSI on some terminals), so those are escaped here; they can only
    occur inside strings, where \\u escapes are valid."""
    text = json.dumps(obj, ensure_ascii=False, default=str)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def print_json(obj: Any) -> None:
    sys.stdout.write(to_json(obj) + "\n")
    sys.stdout.flush()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def warn(message: str) -> None:
    err().print(f"warning: {clean(message)}", style="yellow")


def info(message: str) -> None:
    err().print(clean(message), style="dim")


def progress_reporter():
    """A context manager giving the one progress callback every stage takes (``ProgressFn``):
    messages become dim lines on stderr, counted tasks a bar (on a terminal only)."""
    return _Reporter()


class _Reporter:
    def __init__(self):
        self.bar = None
        self.task = ""
        self.terminal = stderr_is_terminal()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._close()
        return False

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def _open(self, event) -> None:
        from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)

        self._close()
        self.task = event.task
        if event.task == "Downloading":
            columns = [TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                       TransferSpeedColumn(), TimeRemainingColumn()]
        else:
            columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("{task.fields[note]}"), TimeElapsedColumn(), TextColumn("eta"),
                       TimeRemainingColumn()]
        self.bar = Progress(*columns, console=err(), transient=True)
        self.bar.start()
        self.bar_task = self.bar.add_task(clean(event.task), total=event.total, note="")

    def __call__(self, event) -> None:
        if event.message:
            info(event.message)
            return
        if not self.terminal or (not event.total and event.task != "Downloading"):
            return
        if self.bar is None or event.task != self.task:
            self._open(event)
        self.bar.update(self.bar_task, completed=event.done, total=event.total, note=clean(event.note))


# -- how results read ------------------------------------------------------------------------


def display_path(path: str) -> str:
    """A path as the user would type it: relative to the current folder or ~ when under them."""
    from pathlib import Path

    p = Path(path)
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(p.relative_to(base))
        except ValueError:
            continue
    return path


def location(chunk) -> str:
    """`path:lines › heading (p. N)`: where a passage came from, as people cite it."""
    where = f"{chunk.path}:{chunk.line_start}-{chunk.line_end}"
    if chunk.heading:
        where += f" › {chunk.heading}"
    if chunk.page:
        where += f" (p. {chunk.page})"
    return where


def source_line(source) -> str:
    """`[n] path:lines › heading (p. N)`"""
    lines = (f"{source.line_start}" if source.line_start == source.line_end
             else f"{source.line_start}-{source.line_end}")
    text = f"[{source.n}] {display_path(source.path)}:{lines}"
    if source.heading:
        text += f" › {source.heading.replace(' > ', ' › ')}"
    if source.page:
        text += f" (p. {source.page})"
    return clean(text)
