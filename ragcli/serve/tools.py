"""``NoteTools``: what `rag mcp` serves (search, ask, get, status), over one ``Notes``.

Free of any protocol: the methods take plain arguments, return JSON-ready dicts and raise
our typed errors; ``serve.mcp`` puts them on the wire. The ``Notes`` asks a running watcher
first and otherwise keeps the index, the embedding model and, from the first ``ask``, the
generator loaded between calls; ``warm_up`` loads the first two before anyone asks. The MCP
SDK runs each call in a worker thread: ``Notes`` serves them one at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from ..config import Config
from ..errors import UsageError
from ..library import Notes

MAX_K = 50


class NoteTools:
    def __init__(self, config: Config):
        self.notes = Notes(config)
        self.warm_s: float | None = None  # how long warm_up took, once it has run

    def search(self, query: str, k: int | None = None, mode: str | None = None,
               path: str | None = None, tag: str | None = None, since: str | None = None,
               until: str | None = None) -> dict[str, Any]:
        k = self.notes.config.top_k if k is None else k
        if not 1 <= k <= MAX_K:
            raise UsageError(f"k must be between 1 and {MAX_K}, not {k}")
        if not query or not query.strip():
            raise UsageError("the query is empty", hint="Pass the words or question to search for.")
        mode = mode or self.notes.config.mode
        hits = self.notes.search(query, k, mode, path=path, tag=tag, since=since, until=until)
        return {"query": query, "mode": mode, "results": [h.to_json() for h in hits]}

    def ask(self, question: str) -> dict[str, Any]:
        if not question or not question.strip():
            raise UsageError("the question is empty")
        return self.notes.ask(question).to_json()

    def get(self, path: str, line_start: int | None = None, line_end: int | None = None,
            page: int | None = None) -> dict[str, Any]:
        return self.notes.get(path, line_start, line_end, page).to_json()

    def status(self) -> dict[str, Any]:
        info = self.notes.status()
        info["server"] = {"searcher_loaded": self.notes.searcher_loaded,
                          "generator_loaded": self.notes.generator_loaded, "warm_up_s": self.warm_s}
        return info

    def warm_up(self) -> None:
        """Load the index and the embedding model now (on a thread: ``start_warm_up``). A
        missing index is not an error here: the tools report it when called, and pick the
        index up once it exists."""
        from ..errors import RagError

        started = time.perf_counter()
        try:
            self.notes.warm_up()
        except RagError as exc:  # said again, with its hint, by the first tool called
            logging.getLogger(__name__).warning("not ready yet: %s", exc)
            return
        except Exception:  # a thread's failure must reach the log, not vanish
            logging.getLogger(__name__).exception("warming up the index failed")
            return
        self.warm_s = time.perf_counter() - started

    def start_warm_up(self) -> threading.Thread:
        thread = threading.Thread(target=self.warm_up, name="rag-mcp-warm-up", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.notes.close()
