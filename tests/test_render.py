"""`rag search`'s text output into a pipe is written without rich (``render._plain``), and
must be the bytes rich writes there (a line with a tab still goes through rich)."""

from __future__ import annotations

import io
import sys

import pytest

from ragcli import render
from ragcli.types import Chunk, Hit

ODD = [  # what a note's path, heading or text may hold
    ("notes/日本語のノート.md", "見出し > 小見出し", "全角の文字 and ASCII mixed " * 20),
    ("notes/emoji 🎉.md", "Café crème > naïve", "combining e\u0301 and a wide 🎉 emoji, [bold]markup[/bold] :smile:"),
    ("notes/odd\nname.md", "trailing spaces   ", "   leading and trailing   "),
    ("notes/esc.md", "bell \x07 and \x1b[31mred\x1b[0m", "a C1 \x9b31m control and \r\n a CRLF"),
    ("notes/long.md", "", "word " * 200),
    ("notes/tab.md", "a\theading", "text"),  # rich expands a tab to its column's stop
]


def _hits(rows) -> list[Hit]:
    return [Hit(Chunk(f"id{i}", path, "title", heading, text, i + 1, i + 3, page=(2 if i % 2 else None)),
                0.123456 * (i + 1), i + 1) for i, (path, heading, text) in enumerate(rows)]


def _printed(monkeypatch, hits, plain: bool | None) -> str:
    buffer = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stdout", buffer)
    render.reset_consoles()
    if plain is not None:
        monkeypatch.setattr(render, "_plain", lambda stream: plain)
    try:
        render.print_hits(hits)
    finally:
        render.reset_consoles()
    return buffer.getvalue()


def test_hits_into_a_pipe_are_the_bytes_rich_writes(monkeypatch):
    hits = _hits(ODD)
    with monkeypatch.context() as m:
        by_rich = _printed(m, hits, plain=False)
    assert "rich.console" in sys.modules
    assert _printed(monkeypatch, hits, plain=None) == by_rich
    assert render._plain(io.StringIO())


@pytest.mark.parametrize("env, plain", [({"FORCE_COLOR": "1"}, False), ({"FORCE_COLOR": ""}, True),
                                        ({"TTY_COMPATIBLE": "1"}, False), ({"TTY_COMPATIBLE": "0"}, True)])
def test_plain_only_where_rich_sees_no_terminal(monkeypatch, env, plain):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    stream = io.StringIO()
    assert render._plain(stream) is plain
    assert render._console(stream).is_terminal is not plain
