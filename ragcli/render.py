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

from .closing import Closing

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


def _console(stream):
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=True, no_color=not _colour_allowed(stream),
                   emoji=False, markup=False)


@lru_cache(maxsize=None)
def out():
    """Console for results (stdout): rich on a terminal, plain lines otherwise."""
    return _console(sys.stdout)


@lru_cache(maxsize=None)
def err():
    """Console for progress, warnings and errors (stderr): rich on a terminal, plain lines otherwise."""
    return _console(sys.stderr)


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


# The version of every JSON document the CLI prints (its top-level "schema" key): raised when
# a key changes meaning or goes away, so a script can tell which shape it reads.
SCHEMA = 1


def print_json(obj: dict[str, Any]) -> None:
    sys.stdout.write(to_json({"schema": SCHEMA, **obj}) + "\n")
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


class _Reporter(Closing):
    def __init__(self):
        self.bar = None
        self.task = ""
        self.terminal = stderr_is_terminal()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def _open(self, event) -> None:
        from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn, TransferSpeedColumn)

        self.close()
        self.task = event.task
        if event.task == "Downloading":
            columns = [TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                       TransferSpeedColumn(), TimeRemainingColumn()]
        else:
            # the bar and the time left follow the work (bytes) when the event carries it;
            # the count shown stays the items' (files)
            columns = [TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
                       TextColumn("{task.fields[note]}"), TimeElapsedColumn(), TextColumn("eta"),
                       TimeRemainingColumn()]
        self.bar = Progress(*columns, console=err(), transient=True)
        self.bar.start()
        self.bar_task = self.bar.add_task(clean(event.task), total=event.total, note="", count="")

    def __call__(self, event) -> None:
        if event.message:
            info(event.message)
            return
        if not self.terminal or (not event.total and event.task != "Downloading"):
            return
        if self.bar is None or event.task != self.task:
            self._open(event)
        weighted = event.work_total is not None
        count = f"{event.done}/{event.total}" if event.total else str(event.done)
        self.bar.update(self.bar_task, completed=event.work_done if weighted else event.done,
                        total=event.work_total if weighted else event.total, note=clean(event.note),
                        count=count if event.task != "Downloading" else "")


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


# -- whole results, printed the same whichever way they were made (in process or by the watcher)


def print_hits(hits) -> None:
    """`rag search`'s text output: rank, where, score, then a one-line snippet."""
    if not hits:
        err().print("No results.")
        return
    lines = []
    for hit in hits:
        snippet = " ".join(clean(hit.chunk.text).split())
        if len(snippet) > 240:
            snippet = snippet[:237] + "..."
        lines += [(f"{hit.rank}. {clean(location(hit.chunk))}  [{hit.score:.4f}]", "bold"), (f"   {snippet}", None)]
    console = out()
    for text, style in lines:
        console.print(text, style=style)


_line_open = False  # streamed answer text is on the current line, not yet ended


def stream_to_stdout(piece: str) -> None:
    global _line_open
    text = clean(piece)
    if not _line_open:
        text = text.lstrip()  # a sentence after the quotes starts its own line
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
        _line_open = not text.endswith("\n")


def _end_streamed_line(blank: bool = False) -> None:
    global _line_open
    if _line_open:
        sys.stdout.write("\n\n" if blank else "\n")
        sys.stdout.flush()
        _line_open = False


def print_quotes(quotes) -> None:
    """The evidence: what the notes say, word for word, grouped by the note (and heading) it
    is in, each quote numbered and placed by its lines; below the direct answer, when one was
    said first."""
    _end_streamed_line(blank=True)
    console = out()
    previous = None
    for (path, heading, page), group in _by_note(quotes):
        below = _below_title(path, heading)
        if path == previous and below:
            # the same note under another heading: its path was just printed, the heading is what changes
            console.print(f" \u203a {clean(below).replace(' > ', ' › ')}" + (f" (p. {page})" if page else ""),
                          style="bold")
        else:
            _note_header(console, path, heading, page)
        previous = path
        for q in group:
            where = f"line {q.line_start}" if q.line_start == q.line_end else f"lines {q.line_start}-{q.line_end}"
            text = clean(q.text)
            if q.kind in ("code", "block", "steps", "table", "list"):
                lead, _, block = text.partition("\n") if q.kind == "block" else ("", "", text)
                console.print(f"  [{q.n}] {where}:" + (f" \u201c{' '.join(lead.split())}\u201d" if lead else ""),
                              style="cyan")
                for line in block.splitlines():
                    console.print(f"      {line}", style="cyan")
            else:
                console.print(f"  [{q.n}] {where}: \u201c{' '.join(text.split())}\u201d", style="cyan")
    if quotes:
        console.print("")


def _by_note(quotes) -> list[tuple[tuple[str, str, int | None], list]]:
    groups: dict[tuple[str, str, int | None], list] = {}
    for q in quotes:
        groups.setdefault((q.path, q.heading, q.page), []).append(q)
    return list(groups.items())


def _note_header(console, path: str, heading: str, page: int | None) -> None:
    """`path › heading (p. N)`; on a terminal the path is a link (OSC 8) that opens the note:
    in Obsidian when it sits in a vault, else as a file."""
    text = clean(display_path(path))
    heading = _below_title(path, heading)
    rest = (f" › {clean(heading).replace(' > ', ' › ')}" if heading else "") + (f" (p. {page})" if page else "")
    stream = getattr(console, "file", sys.stdout)
    if not stream.isatty() or os.environ.get("TERM") == "dumb":
        console.print(text + rest, style="bold")
        return
    bold, plain = ("\x1b[1m", "\x1b[0m") if _colour_allowed(stream) else ("", "")
    # written by hand, not by rich: rich gives each link a random id, and the same answer
    # should print the same bytes every time (through the watcher or in process)
    stream.write(f"{bold}\x1b]8;;{note_uri(path)}\x1b\\{text}\x1b]8;;\x1b\\{rest}{plain}\n")
    stream.flush()


def _below_title(path: str, heading: str) -> str:
    """The heading trail without a first heading that only repeats the file's name (a note's
    H1 is usually its title): the path above already says it."""
    first, _, rest = heading.partition(" > ")
    stem = os.path.splitext(os.path.basename(path))[0]
    return rest if first.strip().casefold() == stem.strip().casefold() else heading


def note_uri(path: str) -> str:
    """obsidian://open?path=... for a note inside a vault (a folder above it holds .obsidian),
    else a file:// URI."""
    from pathlib import Path
    from urllib.parse import quote

    p = Path(path)
    if any((parent / ".obsidian").is_dir() for parent in p.parents):
        return "obsidian://open?path=" + quote(str(p), safe="")
    return p.as_uri() if p.is_absolute() else p.resolve().as_uri()


def print_answer(result, *, streamed: bool, verbose: bool = False) -> None:
    """The answer and the quotes (unless they were streamed already), then what the notes do not
    say. The quotes are the answer unless a checked sentence adds to them (a yes or no, the
    figure asked for, two quotes put together): nothing is said twice. Printed at once, the
    direct answer comes first; streamed, the model's sentences follow the quotes, which are
    shown while it is still reading them."""
    console = out()
    if not result.covered:
        console.print(clean(result.text))
        if result.not_mentioned:
            console.print("No note mentions " + ", ".join(f"\u201c{clean(n)}\u201d" for n in result.not_mentioned)
                          + ".", style="dim")
        if result.not_found:
            names = ", ".join(f"\u201c{clean(n)}\u201d" for n in result.not_found)
            console.print(f"The notes found never mention {names}.", style="dim")
        if result.nearest:
            console.print("The nearest notes, which may not answer it: "
                          + " \u00b7 ".join(clean(os.path.splitext(os.path.basename(p))[0]) for p in result.nearest)
                          + " (`rag search` shows where)", style="dim")
        return
    if streamed:
        _end_streamed_line()
    else:
        if result.text:
            console.print(clean(result.text))
            console.print("")
        print_quotes(result.quotes)
    for part in result.missing_parts:
        console.print(f"Your notes don't say: {clean(part).rstrip('?.')}?")
    if result.not_mentioned and (result.tentative or result.missing_parts):  # why it hedges, or lacks a part
        console.print("No note uses " + ", ".join(f"\u201c{clean(n)}\u201d" for n in result.not_mentioned) + ".",
                      style="dim")
    if result.tentative:
        console.print("These passages may answer it; none says so plainly.", style="dim")
    for notice in result.notices:
        sys.stdout.flush()
        warn(notice)
    if result.dropped and verbose:
        sys.stdout.flush()
        n = len(result.dropped)
        info(f"{n} generated sentence{'s were' if n > 1 else ' was'} left out: "
             + "; ".join(f"\u201c{clean(d['sentence'])}\u201d ({d['reason']})" for d in result.dropped))
