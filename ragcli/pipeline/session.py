"""``Session``: what one command (or the watcher) has loaded, and the order it is let go.

A command creates one Session and closes it when done. The session opens the index (as a
reader, or as the one writer), and loads the embedder and the parse worker only when first
asked, so `rag index` on an unchanged vault never loads a model and `rag search` never
starts a parse worker. ``close`` releases them in reverse: the parser's child process, the
embedder, then the index (and its write lock). A generator is its caller's (``ragcli.Notes``
keeps one; ``pipeline.answer`` makes one for a single answer).

Cancellation is a flag, not an exception thrown from a signal handler: whoever wants a
run to stop sets ``cancel`` (a signal handler may), and the pipeline checks it between
files and batches, where stopping loses nothing but the batch not yet written.
"""

from __future__ import annotations

import threading

from ..closing import Closing
from ..config import Config
from ..errors import Cancelled
from ..progress import ProgressFn


class Session(Closing):
    def __init__(self, config: Config, progress: ProgressFn | None = None,
                 cancel: threading.Event | None = None):
        self.config = config
        self.progress = progress
        self.cancel = cancel or threading.Event()
        self._index = None
        self._embedder = None
        self._own_embedder = False
        self._parser = None

    # -- the index --------------------------------------------------------------------------
    def open_writer(self, role: str = "index", wait: float = 0.0):
        from ..store import Index

        if self._index is None:
            self._index = Index.open_writer(self.config, role=role, wait=wait)
        return self._index

    def open_reader(self):
        from ..store import Index

        if self._index is None:
            self._index = Index.open_reader(self.config)
        return self._index

    # -- models and workers, loaded on first use --------------------------------------------
    @property
    def embedder(self):
        if self._embedder is None:
            from ..embed import make_embedder

            self._embedder = make_embedder(self.config, progress=self.progress)
            self._own_embedder = True
        return self._embedder

    def use_embedder(self, embedder) -> None:
        """Lend an embedder loaded elsewhere (eval and benches reuse one across indexes)."""
        self._embedder, self._own_embedder = embedder, False

    @property
    def parser(self):
        if self._parser is None:
            from ..ingest import Parser

            self._parser = Parser(self.config)
        return self._parser

    # -- cancellation -----------------------------------------------------------------------
    def check_cancelled(self) -> None:
        """Raise ``Cancelled`` when a stop was asked for (call it between units of work)."""
        if self.cancel.is_set():
            raise Cancelled("stopped before the work was done")

    # -- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        parser, self._parser = self._parser, None
        embedder, self._embedder = (self._embedder if self._own_embedder else None), None
        index, self._index = self._index, None
        try:
            if parser is not None:
                parser.close()
            if embedder is not None:
                embedder.close()
        finally:
            if index is not None:
                index.close()
