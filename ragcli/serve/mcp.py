"""The notes as tools for agents: an MCP server on stdio, built on the official ``mcp`` SDK.

``serve(config)`` runs until the client closes stdin. The tools are read-only and map onto
``NoteTools`` (see ``serve.tools``): ``search``, ``ask``, ``get`` and ``status``.

Errors never end the server: one of our ``RagError`` becomes a tool error whose text is
the message and its hint; a bug becomes a tool error naming the exception (its traceback
goes to stderr); arguments that do not fit a tool's schema are refused by the SDK.

stdout is the wire. While serving, the SDK writes the protocol to a private copy of the
descriptor and points fd 1 at stderr, so a stray print (or llama.cpp's load log) cannot
corrupt a reply. Loading models moves fds 1 and 2 for a moment, so nothing loads before
the SDK has taken stdout: the warm-up starts inside the server's lifespan.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from .. import __version__
from ..config import MODES, Config
from ..errors import RagError
from .tools import MAX_K, NoteTools

T = TypeVar("T")
log = logging.getLogger(__name__)

INSTRUCTIONS = """\
Search and read the user's own notes (Markdown, Obsidian, PDF), indexed locally by ragcli.
Use `search` to find passages (each with its file path, heading, line range and PDF page),
`get` to read more of a note around a result, `ask` for a short answer with numbered
sources from a small local model, and `status` to see which folders are indexed.
Cite notes as path:line_start-line_end."""


def build_server(tools: NoteTools, warm_up: bool = True):
    """An MCPServer exposing ``tools``; with ``warm_up`` the index loads as the session starts."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    @asynccontextmanager
    async def lifespan(_server) -> AsyncIterator[None]:
        if warm_up:
            tools.start_warm_up()
        try:
            yield None
        finally:
            tools.close()

    server = MCPServer("ragcli", version=__version__, instructions=INSTRUCTIONS,
                       lifespan=lifespan, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                open_world_hint=False)

    @server.tool(annotations=read_only)
    def search(
        query: Annotated[str, Field(description="What to look for: words or a question.")],
        k: Annotated[int | None,
                     Field(description=f"How many passages (1-{MAX_K}); default: the configured top_k.")] = None,
        mode: Annotated[Literal[MODES] | None,
                        Field(description="Retrieval: hybrid (default), vector (meaning) or keyword "
                                          "(exact words).")] = None,
        path: Annotated[str | None,
                        Field(description="Only files whose path matches this glob, e.g. '*/Projects/*'.")] = None,
        tag: Annotated[str | None, Field(description="Only notes with this tag (without '#').")] = None,
        since: Annotated[str | None, Field(description="Only notes dated on or after this day (YYYY-MM-DD).")] = None,
        until: Annotated[str | None, Field(description="Only notes dated on or before this day (YYYY-MM-DD).")] = None,
    ) -> dict[str, Any]:
        """Search the indexed notes. Each result has path, title, heading (the heading path),
        line_start/line_end (1-based, inclusive), page (PDFs), score and the passage text."""
        return _call(lambda: tools.search(query, k, mode, path, tag, since, until))

    @server.tool(annotations=read_only)
    def ask(question: Annotated[str, Field(description="The question to answer from the notes.")]) -> dict[str, Any]:
        """Answer a question from the notes with a small local model. Returns the answer with
        [n] citations and the numbered sources (path, heading, lines, page); says so when the
        notes do not cover the question. Slower than `search` (seconds)."""
        return _call(lambda: tools.ask(question))

    @server.tool(annotations=read_only)
    def get(
        path: Annotated[str, Field(description="A note's path as a search result gives it, "
                                               "or relative to an indexed folder.")],
        line_start: Annotated[int | None, Field(description="First line to return (1-based); default 1.")] = None,
        line_end: Annotated[int | None, Field(description="Last line to return (inclusive); default the end.")] = None,
        page: Annotated[int | None, Field(description="For a PDF: the page (lines number within the page).")] = None,
    ) -> dict[str, Any]:
        """Read an indexed note, or a range of its lines (e.g. around a search result). Only
        notes in the index can be read; anything else is refused."""
        return _call(lambda: tools.get(path, line_start, line_end, page))

    @server.tool(annotations=read_only)
    def status() -> dict[str, Any]:
        """What is indexed: the folders (roots), file and chunk counts, the embedding model,
        the index's size and when it was last updated."""
        return _call(tools.status)

    return server


def _call(fn: Callable[[], T]) -> T:
    """Run a tool; turn our errors (and bugs) into tool errors the client can read."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return fn()
    except RagError as exc:
        raise ToolError(f"{exc}\nHint: {exc.hint}" if exc.hint else str(exc)) from None
    except Exception as exc:  # a bug must not end the server or hide its cause
        log.exception("tool failed")
        raise ToolError(f"unexpected {type(exc).__name__}: {exc}") from None


def serve(config: Config) -> None:
    """Serve the tools on stdin/stdout until the client closes stdin."""
    build_server(NoteTools(config)).run("stdio")
