"""An index's vector store over the index's life: when it opens, reopens, and is let go.

One class per way an ``Index`` holds its store, each with one ``store()``:
- ``WriterVectors``: opened once, on first use or ahead on a thread (``open_ahead``); on a
  Chroma server, a writer fills a collection that lost vectors from the vector cache;
- ``ReaderVectors``: reopened when another process wrote (an on-disk Chroma client can miss
  another process's writes; a server never does);
- ``BorrowedVectors``: a reader beside the writer of its own process (the watcher serving
  searches) uses the writer's store: Chroma keeps one system per folder and process, which
  sees the writer's writes, so it is shared, never reopened.
"""

from __future__ import annotations

import contextlib

from ..config import Config
from .manifest import Manifest
from .paths import CHROMA_NAME
from .recovery import forget_chroma_clients
from .remote import catch_up, remote_collection


class Vectors:
    """The store opened on first use and kept until ``drop``."""

    def __init__(self, config: Config, manifest: Manifest):
        self.config = config
        self._m = manifest
        self._store = None
        self._caught_up = False  # on a Chroma server: the collection was compared with the manifest
        self._fill = None  # what fills a server's collection that lost vectors (a reader may not)

    @property
    def writes(self) -> bool:
        """A writer's store: it fills a server's collection that lost vectors, and its reads
        must see its own writes (so never the flat search of a reader)."""
        return self._fill is not None

    def store(self):
        if self._store is None:
            self._store = self._open()
        return self._store

    def opened(self):
        """The store if it is open now, else None (this never opens it)."""
        return self._store

    def skip_catch_up(self) -> None:
        """The caller puts the server's collection in step itself (recovery, a rebuild)."""
        self._caught_up = True

    def collection(self) -> str:
        """This index's collection on the Chroma server (``store.remote``)."""
        return remote_collection(self._m.get_meta)

    def drop(self) -> None:
        """Let go of the store; the next ``store()`` opens it again."""
        store, self._store = self._store, None
        if store is not None:
            store.close()

    def close(self) -> None:
        self.drop()

    def _open(self, fresh: bool = False):
        from .vectors import ChromaStore

        url = self.config.chroma_url
        if not url:
            if fresh:
                forget_chroma_clients()
            return ChromaStore.persistent(self.config.index_dir / CHROMA_NAME)
        store = ChromaStore.remote(url, name=self.collection())
        if not self._caught_up:
            self._caught_up = True
            catch_up(store, self._m.counts()[1], url, self._fill)
        return store


class WriterVectors(Vectors):
    def __init__(self, config: Config, manifest: Manifest):
        super().__init__(config, manifest)
        self._ahead = None  # a vectors.OpenAhead: the local store being opened on a thread
        self._fill = self._fill_from_cache

    def open_ahead(self) -> None:
        """Start opening the local store on a thread while the writer goes on: a writer calls
        this once it knows it will write, and parses and embeds meanwhile."""
        if self._store is not None or self._ahead is not None or self.config.chroma_url:
            return
        from .vectors import OpenAhead

        self._ahead = OpenAhead(self.config.index_dir / CHROMA_NAME)

    def store(self):
        if self._store is None and self._ahead is not None:
            self._store, self._ahead = self._ahead.result(), None
        return super().store()

    def close(self) -> None:
        if self._ahead is not None:  # never exit with Chroma half-loaded on a thread
            with contextlib.suppress(Exception):  # nobody wanted the store; its error does not matter
                self._ahead.result()
            self._ahead = None
        self.drop()

    def _fill_from_cache(self, store) -> None:
        from .sync import sync_into

        sync_into(self._m, self._m.dim(), store)


class ReaderVectors(Vectors):
    def __init__(self, config: Config, manifest: Manifest):
        super().__init__(config, manifest)
        self._generation = -1  # the manifest's generation when the store was opened

    def store(self):
        generation = self._m.generation()
        if self._store is None or (generation != self._generation and not self.config.chroma_url):
            self._store = self._open(fresh=self._store is not None)
            self._generation = generation
        return self._store


class BorrowedVectors(Vectors):
    def __init__(self, config: Config, manifest: Manifest, writer: Vectors):
        super().__init__(config, manifest)
        self._writer = writer

    def store(self):
        # The writer's store when it has one (its SQLite untouched); else one of our own,
        # opened without forgetting clients: that would close the writer's.
        shared = self._writer.opened()
        return shared if shared is not None else super().store()
