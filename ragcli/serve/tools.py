"""``NoteTools``: what `rag mcp` serves (search, ask, get, status) over one warm index.

Free of any protocol: the methods take plain arguments, return JSON-ready dicts and raise
our typed errors; ``serve.mcp`` puts them on the wire. Between calls the tools keep one
``Searcher`` (the index and the embedding model) and, from the first ``ask``, one
generator, so only the first call pays for loading them — and ``warm_up`` pays for the
searcher before anyone asks.

The MCP SDK runs each call in a worker thread. The index's SQLite connection, the embedder
and the generator must not be used by two threads at once (and two llama.cpp loads at
once race on file descriptors 1 and 2), so one lock serialises every call: a search waits
while an answer is being generated.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from ..config import Config
from ..errors import UsageError

MAX_K = 50


class NoteTools:
    def __init__(self, config: Config):
        self.config = config
        self._lock = threading.Lock()
        self._searcher = None
        self._generator = None
        self.warm_s: float | None = None  # how long warm_up took, once it has run

    # -- the tools --------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, mode: str | None = None,
               path: str | None = None, tag: str | None = None, since: str | None = None,
               until: str | None = None) -> dict[str, Any]:
        from ..retrieve import Filters

        k = self.config.top_k if k is None else k
        if not 1 <= k <= MAX_K:
            raise UsageError(f"k must be between 1 and {MAX_K}, not {k}")
        if not query or not query.strip():
            raise UsageError("the query is empty", hint="Pass the words or question to search for.")
        mode = mode or self.config.mode
        with self._lock:
            hits = self._searcher_ready().search(
                query, k, mode, Filters(path=path, tag=tag, since=since, until=until))
        return {"query": query, "mode": mode, "results": [h.to_json() for h in hits]}

    def ask(self, question: str) -> dict[str, Any]:
        from ..pipeline.answer import answer

        if not question or not question.strip():
            raise UsageError("the question is empty")
        with self._lock:
            searcher = self._searcher_ready()
            result = answer(self.config, question, generator=self._generator_ready(), searcher=searcher)
        return result.to_json()

    def get(self, path: str, line_start: int | None = None, line_end: int | None = None,
            page: int | None = None) -> dict[str, Any]:
        from .notes import read_note

        max_bytes = int(self.config.max_file_mb * 2**20)
        with self._lock:
            return read_note(self._searcher_or_index(), path, line_start, line_end, page,
                             max_bytes=max_bytes).to_json()

    def status(self) -> dict[str, Any]:
        from ..maintenance.status import index_status

        info = index_status(self.config)
        info["server"] = {"searcher_loaded": self._searcher is not None,
                          "generator_loaded": self._generator is not None, "warm_up_s": self.warm_s}
        return info

    # -- what stays loaded ------------------------------------------------------------------
    def warm_up(self) -> None:
        """Open the index and load the embedding model (and Chroma) before the first search.

        A missing index is not an error here: the tools report it when called, and pick the
        index up once it exists.
        """
        from ..errors import RagError

        started = time.perf_counter()
        with self._lock:
            try:
                searcher = self._searcher_ready()
                searcher.index.vectors  # noqa: B018 - opens Chroma (its import alone is ~0.8 s)
            except RagError as exc:  # said again, with its hint, by the first tool called
                logging.getLogger(__name__).warning("not ready yet: %s", exc)
                return
        self.warm_s = time.perf_counter() - started

    def start_warm_up(self) -> threading.Thread:
        thread = threading.Thread(target=self._warm_up_logged, name="rag-mcp-warm-up", daemon=True)
        thread.start()
        return thread

    def _warm_up_logged(self) -> None:
        try:
            self.warm_up()
        except Exception:  # a thread's failure must reach the log, not vanish
            logging.getLogger(__name__).exception("warming up the index failed")

    def _searcher_ready(self):
        """The searcher, its embedder loaded (and checked against the index)."""
        if self._searcher is None:
            from ..retrieve import Searcher

            self._searcher = Searcher(self.config)
        self._searcher.embedder  # noqa: B018 - loads the model and checks it matches the index
        return self._searcher

    def _searcher_or_index(self):
        """The open index, without loading a model (``get`` needs none)."""
        if self._searcher is None:
            from ..retrieve import Searcher

            self._searcher = Searcher(self.config)
        return self._searcher.index

    def _generator_ready(self):
        if self._generator is None:
            from ..generate import make_generator

            self._generator = make_generator(self.config)
        return self._generator

    def close(self) -> None:
        with self._lock:
            generator, self._generator = self._generator, None
            searcher, self._searcher = self._searcher, None
            try:
                if generator is not None:
                    generator.close()
            finally:
                if searcher is not None:
                    searcher.close()
