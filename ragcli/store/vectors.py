"""The vector side of the index: Chroma, on disk or on a Chroma server.

Chroma holds only ids, vectors and the path of each chunk (for filters); the manifest
holds everything else, so this store can be rebuilt from the manifest's vector cache.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import numpy as np

from ..errors import StoreError

COLLECTION = "ragcli-chunks"
SERVER_HINT = ("Start it (chroma run --path DIR --host HOST --port PORT) or unset RAG_CHROMA_URL; "
               "the index catches up on the next run, from its vector cache.")


class VectorStore(Protocol):
    def upsert(self, ids: Sequence[str], vectors: np.ndarray, paths: Sequence[str]) -> None: ...
    def delete(self, ids: Sequence[str]) -> None: ...
    def query(self, vector: np.ndarray, k: int, paths: Sequence[str] | None = None) -> list[tuple[str, float]]: ...
    def pages(self, size: int = 2000):
        """Every (ids, metadatas, embeddings) page of the collection, in order."""

    def count(self) -> int: ...
    def reset(self) -> None: ...
    def close(self) -> None: ...


def _quiet_chroma() -> None:
    # Nothing phones home: Chroma's telemetry is off before chromadb is imported.
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


class ChromaStore:
    """A Chroma collection with cosine distance; embeddings are always given by us."""

    def __init__(self, client, name: str = COLLECTION, url: str | None = None):
        self.client = client
        self.name = name
        self.url = url  # the server's, or None for a folder on disk
        with self._guard():
            self.batch = max(1, min(client.get_max_batch_size(), 5000))
            self._open()

    def _open(self) -> None:
        self.col = self.client.get_or_create_collection(
            self.name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}})

    @contextmanager
    def _guard(self):
        """On a server, any failure (it stopped, the network went) is a StoreError that says
        which server; the manifest is untouched by it and the next writer catches up."""
        if self.url is None:
            yield
            return
        try:
            yield
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - chromadb and httpx raise many types
            raise StoreError(f"the Chroma server at {self.url} failed: {type(exc).__name__}: {exc}",
                             hint=SERVER_HINT) from None

    @classmethod
    def persistent(cls, path: Path) -> "ChromaStore":
        _quiet_chroma()
        import chromadb
        from chromadb.config import Settings

        try:
            client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
            return cls(client)
        except Exception as exc:  # noqa: BLE001 - chromadb raises many types; all mean "cannot open"
            raise StoreError(f"{path}: cannot open the vector store: {exc}") from None

    @classmethod
    def remote(cls, url: str, name: str = COLLECTION) -> "ChromaStore":
        _quiet_chroma()
        from urllib.parse import urlparse

        import chromadb
        from chromadb.config import Settings

        parsed = urlparse(url if "://" in url else f"http://{url}")
        try:
            client = chromadb.HttpClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                                         ssl=parsed.scheme == "https",
                                         settings=Settings(anonymized_telemetry=False))
        except Exception as exc:  # noqa: BLE001 - the client checks the server's heartbeat
            raise StoreError(f"cannot reach the Chroma server at {url}: {exc}", hint=SERVER_HINT) from None
        return cls(client, name, url=url)

    def upsert(self, ids: Sequence[str], vectors: np.ndarray, paths: Sequence[str]) -> None:
        for start in range(0, len(ids), self.batch):
            end = start + self.batch
            with self._guard():
                self.col.upsert(ids=list(ids[start:end]),
                                embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                                metadatas=[{"path": p} for p in paths[start:end]])

    def delete(self, ids: Sequence[str]) -> None:
        ids = list(ids)
        for start in range(0, len(ids), self.batch):
            with self._guard():
                self.col.delete(ids=ids[start:start + self.batch])

    def query(self, vector: np.ndarray, k: int, paths: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity) of the k nearest chunks, optionally within ``paths``."""
        if paths is not None and not paths:
            return []
        where = None
        if paths is not None:
            where = {"path": {"$in": list(paths)}} if len(paths) > 1 else {"path": paths[0]}
        # No count() first: it cost 15 of a warm hybrid query's ~33 ms, and Chroma already
        # returns fewer than n_results when the collection (or the filter) holds fewer.
        with self._guard():
            result = self.col.query(query_embeddings=np.asarray([vector], dtype=np.float32),
                                    n_results=max(1, k), where=where, include=["distances"])
        return [(cid, 1.0 - float(d)) for cid, d in zip(result["ids"][0], result["distances"][0])]

    def pages(self, size: int = 2000):
        """Every (ids, metadatas, embeddings) page of the collection, in order."""
        offset = 0
        while True:
            with self._guard():
                page = self.col.get(include=["metadatas", "embeddings"], limit=size, offset=offset)
            ids = page["ids"]
            if not ids:
                return
            offset += len(ids)
            yield ids, page["metadatas"] or [None] * len(ids), page["embeddings"]
            if len(ids) < size:
                return

    def count(self) -> int:
        with self._guard():
            return self.col.count()

    def close(self) -> None:
        """Nothing to do: Chroma keeps one system per folder and process, which
        ``recovery.forget_chroma_clients`` drops when a folder must be let go."""

    def reset(self) -> None:
        with self._guard():
            try:
                self.client.delete_collection(self.name)
            except Exception:  # noqa: BLE001 - not there: nothing to reset
                if self.url is not None:
                    self.client.heartbeat()  # but a server that is gone is an error, not "not there"
            self._open()


class OpenAhead:
    """A local ``ChromaStore`` being opened on a thread, its collection loaded, for a writer that
    knows it will write. Both steps hold the GIL (the import is pure
    Python; the collection's load, ~0.5 s at 168k chunks, runs in Rust without letting go), so
    this only overlaps them with what lets go of it (embedding, file reads)."""

    def __init__(self, path: Path):
        self._store: ChromaStore | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._open, args=(path,), name="ragcli-open-vectors", daemon=True)
        self._thread.start()

    def _open(self, path: Path) -> None:
        try:
            store = ChromaStore.persistent(path)
            store.count()  # the collection's first use loads its index: now, not at the first write
            self._store = store
        except BaseException as exc:  # noqa: BLE001 - handed to the caller of result()
            self._error = exc

    def result(self) -> ChromaStore:
        """The store (waits for it); what opening it raised, raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._store is not None
        return self._store

