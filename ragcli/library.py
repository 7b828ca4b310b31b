"""``Notes``: ragcli as a library, and the one holder of what a door keeps loaded.

    from ragcli import Notes

    with Notes() as notes:
        notes.index(["~/notes"])
        hits = notes.search("sourdough starter")
        answer = notes.ask("How often do I feed the starter?")

Every door goes through it: the CLI's `search`, `ask`, `index` and `status`, `rag chat`,
`rag mcp`, and the watcher's socket. Between calls it keeps the index open and the embedding
model and the generator loaded, so only the first call pays for loading them.

A running watcher (`rag watch`) is asked first, since it has all of that warm already; when it
cannot answer (none running, busy, other settings...) the work is done here, with the same
result. ``config.daemon`` (``RAG_DAEMON``) says whether to ask: ``auto``, ``off``, or
``require`` (no fallback: a ``DaemonError``). The watcher's own ``Notes`` is made with
``watcher=False``: it is the side that works in process.

Calls are served one at a time: the index's SQLite connection, the embedder and the generator
must not be used by two threads at once. ``lock`` is re-entrant, so a door may hold it around
a call (the socket takes it with a timeout, to answer "busy" rather than queue).

Nothing heavy is imported here: through a watcher, a call never loads chromadb or a model.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .native import llama_first

# Python callers get what the CLI's main gives every command: on a CUDA build, llama.cpp
# crashed when numpy's extension module (or torch's) was imported first (README, "GPU").
llama_first()

from .closing import Closing  # noqa: E402 - after llama_first, on purpose
from .config import Config, load_config  # noqa: E402
from .types import Answer, Hit, Quote  # noqa: E402


class Notes(Closing):
    def __init__(self, config: Config | None = None, *, watcher: bool = True, searcher=None):
        """``config``: default ``load_config()`` (flags > RAG_* > config.toml > defaults).
        ``watcher=False``: never ask a running watcher. ``searcher``: a ``retrieve.Searcher``
        to use (the watcher's, on the index it writes), closed with this object."""
        self.config = config if config is not None else load_config()
        self.lock = threading.RLock()
        self._watcher = watcher
        self._searcher = searcher
        self._generator = None
        # (chunks with no vector yet, all chunks) as of the last search or answer, made in this
        # process or by a watcher; None when nothing was asked yet (or an older watcher answered)
        self.vectors_pending: tuple[int, int] | None = None

    # -- what users call --------------------------------------------------------------------
    def index(self, paths: Sequence[str | Path] | None = None, *, rebuild: bool = False,
              progress=None):
        """Build or update the index of ``paths`` (default: the folders indexed before);
        returns the ``IndexReport``. Always in this process (a running watcher holds the
        write lock, and says so)."""
        from .pipeline import index

        with self.lock:
            self._close_searcher()  # a reader opened before the write would not see it all
            roots = [Path(p).expanduser() for p in paths] if paths else None
            return index(self.config, roots, rebuild=rebuild, progress=progress)

    def search(self, query: str, k: int | None = None, mode: str | None = None, *,
               path: str | None = None, tag: str | None = None, since: str | None = None,
               until: str | None = None) -> list[Hit]:
        """The ``k`` best passages (default ``top_k``); ``mode``: hybrid, vector or keyword;
        ``path`` (a glob), ``tag``, ``since`` and ``until`` (ISO dates) filter the notes."""
        k = self.config.top_k if k is None else k
        mode = mode or self.config.mode
        where = {"path": path, "tag": tag, "since": since, "until": until}
        if self._watcher:
            from .serve.client import daemon_search

            hits = daemon_search(self.config, query, k, mode, where, on_pending=self._set_pending)
            if hits is not None:
                return hits
        from .retrieve import Filters
        from .retrieve.tails import sections_as_read, untailed_hits

        with self.lock:
            reader = self._reader()
            hits = reader.search(query, k, mode, Filters(**where))
            self.vectors_pending = reader.index.pending_counts()
            # each passage as its note has it: a chunk's overlap tail, words joined by spaces from
            # wherever they stood, shows as the lines it was taken from (``retrieve.tails``)
            return untailed_hits(hits, sections_as_read(reader.index))

    def ask(self, question: str, *, k: int | None = None, mode: str | None = None,
            min_score: float | None = None, temperature: float | None = None,
            max_tokens: int | None = None, quotes_only: bool = False,
            on_token: Callable[[str], None] | None = None,
            on_quotes: Callable[[list[Quote]], None] | None = None,
            on_started: Callable[[], None] | None = None,
            retrieval_query: str | None = None, context: str = "") -> Answer:
        """An ``Answer`` from the notes: ``text``, ``sources`` and the ``quotes`` they rest on;
        ``covered`` is False when the notes do not answer. ``quotes_only``: the evidence, no
        model. ``on_quotes`` gets the evidence once chosen, ``on_token`` each checked sentence.
        ``retrieval_query``/``context``: what a chat searches for a follow-up, and the question
        before it. ``on_started``: called when a watcher has taken the question."""
        if not question.strip():  # else "Your notes don't seem to cover this", as if they were read
            from .errors import UsageError

            raise UsageError("the question is empty",
                             hint='Ask in words, e.g. rag ask "How long should the shot take?"')
        settings = {"top_k": k, "mode": mode, "min_score": min_score, "temperature": temperature,
                    "max_tokens": max_tokens}
        config = dataclasses.replace(self.config, **{n: v for n, v in settings.items() if v is not None})
        if self._watcher:
            from .serve.client import daemon_answer

            result = daemon_answer(config, question, on_token=on_token, on_quotes=on_quotes,
                                   quotes_only=quotes_only, on_started=on_started,
                                   retrieval_query=retrieval_query, context=context,
                                   on_pending=self._set_pending)
            if result is not None:
                return result
        from .pipeline.answer import answer

        with self.lock:
            if self._searcher is None:
                require_index(config)  # said before a model loads for nothing
            generator = None
            if not quotes_only:
                generator = self._generator_ready()
                generator.preload()  # the model loads while the index opens (chromadb: ~0.8 s)
                generator.rewind()  # a fresh process's state: the same answer from every door
            result = answer(config, question, generator=generator, searcher=self._reader(),
                            on_token=on_token, on_quotes=on_quotes, quotes_only=quotes_only,
                            retrieval_query=retrieval_query, context=context)
            self.vectors_pending = self._reader().index.pending_counts()
            return result

    def _set_pending(self, counts: tuple[int, int]) -> None:
        self.vectors_pending = counts

    def chat(self):
        """A ``pipeline.chat.ChatSession`` over these notes: ``ask`` understands follow-ups."""
        from .pipeline.chat import ChatSession

        return ChatSession(self)

    def get(self, path: str, line_start: int | None = None, line_end: int | None = None,
            page: int | None = None):
        """An indexed note, or some of its lines (``serve.notes.read_note``); no model loads."""
        from .serve.notes import read_note

        with self.lock:
            return read_note(self._reader().index, path, line_start, line_end, page,
                             max_bytes=int(self.config.max_file_mb * 2**20))

    def status(self) -> dict[str, Any]:
        """What is indexed (roots, files, chunks, model, size...) and a running watcher."""
        from .maintenance.status import index_status

        return index_status(self.config)

    # -- what stays loaded ------------------------------------------------------------------
    @property
    def searcher_loaded(self) -> bool:
        return self._searcher is not None

    @property
    def generator_loaded(self) -> bool:
        return self._generator is not None

    def warm_up(self) -> None:
        """Open the index and load the embedding model (and Chroma) before the first search
        (raises what opening raises: no index, another model...)."""
        with self.lock:
            searcher = self._reader()
            searcher.embedder  # noqa: B018 - loads the model and checks it matches the index
            searcher.index.vectors.store()  # opens Chroma (its import alone is ~0.8 s)

    def _reader(self):
        if self._searcher is None:
            from .retrieve import Searcher

            self._searcher = Searcher(self.config)
        return self._searcher

    def _generator_ready(self):
        if self._generator is None:
            from .generate import make_generator

            self._generator = make_generator(self.config)
        return self._generator

    def _close_searcher(self) -> None:
        searcher, self._searcher = self._searcher, None
        if searcher is not None:
            searcher.close()  # the index, and the embedder if the searcher loaded it

    def close(self) -> None:
        """Let go of the generator, the index and the embedder (in that order)."""
        with self.lock:
            generator, self._generator = self._generator, None
            try:
                if generator is not None:
                    generator.close()
            finally:
                self._close_searcher()


def require_index(config: Config) -> None:
    from .errors import NoIndexError
    from .store import index_exists

    if not index_exists(config):
        raise NoIndexError(f"no index in {config.index_dir}")
