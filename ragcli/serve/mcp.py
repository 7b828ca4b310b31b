"""The notes as tools for agents: an MCP server on stdio, built on the official ``mcp`` SDK.

``serve(config)`` runs until the client closes stdin. The tools are read-only and call one
``ragcli.Notes``: ``search``, ``ask``, ``get`` and ``status``. It asks a running watcher
first and otherwise keeps the index, the embedding model and, from the first ``ask``, the
generator loaded between calls; the first two load as the session starts. The SDK runs each
call in a worker thread: ``Notes`` serves them one at a time.

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
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field

from .. import __version__
from ..config import MODES, Config
from ..errors import RagError, UsageError
from ..library import Notes

T = TypeVar("T")
log = logging.getLogger(__name__)
MAX_K = 50

INSTRUCTIONS = """\
Search and read the user's own notes (Markdown, Obsidian, PDF), indexed locally by ragcli.
Use `search` to find passages (each with its file path, heading, line range and PDF page),
`get` to read more of a note around a result, `ask` for a short answer with numbered
sources from a small local model, and `status` to see which folders are indexed.
Cite notes as path:line_start-line_end."""


def build_server(notes: Notes):
    """An MCPServer over ``notes``; the index loads as the session starts."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    warmed: list[float] = []  # how long the warm-up took, once it has run

    @asynccontextmanager
    async def lifespan(_server) -> AsyncIterator[None]:
        threading.Thread(target=_warm_up, args=(notes, warmed), name="rag-mcp-warm-up", daemon=True).start()
        try:
            yield None
        finally:
            notes.close()

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
        def run() -> dict[str, Any]:
            n = notes.config.top_k if k is None else k
            if not 1 <= n <= MAX_K:
                raise UsageError(f"k must be between 1 and {MAX_K}, not {n}")
            if not query or not query.strip():
                raise UsageError("the query is empty", hint="Pass the words or question to search for.")
            how = mode or notes.config.mode
            hits = notes.search(query, n, how, path=path, tag=tag, since=since, until=until)
            return {"query": query, "mode": how, "results": [h.to_json() for h in hits]}
        return _call(run)

    @server.tool(annotations=read_only)
    def ask(question: Annotated[str, Field(description="The question to answer from the notes.")]) -> dict[str, Any]:
        """Answer a question from the notes with a small local model. Returns the answer with
        [n] citations and the numbered sources (path, heading, lines, page); says so when the
        notes do not cover the question. Slower than `search` (seconds)."""
        def run() -> dict[str, Any]:
            if not question or not question.strip():
                raise UsageError("the question is empty")
            return notes.ask(question).to_json()
        return _call(run)

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
        return _call(lambda: notes.get(path, line_start, line_end, page).to_json())

    @server.tool(annotations=read_only)
    def status() -> dict[str, Any]:
        """What is indexed: the folders (roots), file and chunk counts, the embedding model,
        the index's size and when it was last updated."""
        def run() -> dict[str, Any]:
            info = notes.status()
            info["server"] = {"searcher_loaded": notes.searcher_loaded, "generator_loaded": notes.generator_loaded,
                              "warm_up_s": warmed[-1] if warmed else None}
            return info
        return _call(run)

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


def _warm_up(notes: Notes, took: list[float]) -> None:
    """Load the index and the embedding model before the first call (on a thread). A missing
    index is not an error here: the tools report it when called, and pick the index up once
    it exists."""
    started = time.perf_counter()
    try:
        notes.warm_up()
    except RagError as exc:  # said again, with its hint, by the first tool called
        log.warning("not ready yet: %s", exc)
        return
    except Exception:  # a thread's failure must reach the log, not vanish
        log.exception("warming up the index failed")
        return
    took.append(time.perf_counter() - started)


def serve(config: Config) -> None:
    """Serve the tools on stdin/stdout until the client closes stdin."""
    build_server(Notes(config)).run("stdio")
