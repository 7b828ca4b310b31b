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


def progress(total: int | None = None, description: str = "", unit: str = "files"):
    """A progress bar on stderr when it is a terminal, else a no-op with the same interface."""
    if not stderr_is_terminal():
        return _NoProgress()
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[extra]}"), TimeElapsedColumn(), TextColumn("eta"),
                   TimeRemainingColumn(), console=err(), transient=True)
    return _RichProgress(bar, total, description)


class _NoProgress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, advance: int = 0, total: int | None = None, extra: str = "") -> None:
        pass


class _RichProgress:
    def __init__(self, bar, total, description):
        self.bar, self.total, self.description = bar, total, description

    def __enter__(self):
        self.bar.__enter__()
        self.task = self.bar.add_task(self.description, total=self.total, extra="")
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def update(self, advance: int = 0, total: int | None = None, extra: str = "") -> None:
        kwargs: dict[str, Any] = {"advance": advance, "extra": extra}
        if total is not None:
            kwargs["total"] = total
        self.bar.update(self.task, **kwargs)
