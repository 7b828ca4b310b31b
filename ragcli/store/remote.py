"""The vectors of an index on a Chroma server (``chroma_url``): which collection is this index's.

One server can hold the vectors of many indexes (several laptops, or several index folders
on one): each index has its own collection, named once and recorded in its manifest
(``meta.chroma_collection``), so the name survives a move of the index folder and two
laptops whose index folders have the same path never share a collection.

An index whose manifest records no name (one made before names were recorded) keeps the
name it had then: a hash of its index folder's path.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable

from ..config import Config
from ..errors import StoreError

META_KEY = "chroma_collection"


def legacy_collection(config: Config) -> str:
    """The name an index got before names were recorded: a hash of its folder's path."""
    return "ragcli-" + hashlib.sha256(str(config.index_dir).encode()).hexdigest()[:12]


def remote_collection(config: Config, get_meta: Callable[[str], str | None]) -> str:
    """This index's collection on the Chroma server (``get_meta`` reads the manifest's meta)."""
    return get_meta(META_KEY) or legacy_collection(config)


def new_collection_name(has_chunks: bool, config: Config) -> str:
    """The name to record for an index that has none yet: a fresh one for a new index; for
    one that already has chunks, the name it has been using (so its vectors are found)."""
    return legacy_collection(config) if has_chunks else f"ragcli-{uuid.uuid4().hex[:16]}"


def describe(url: str, collection: str) -> str:
    return f"{url} (collection {collection})"


def catch_up(store, chunks: int, url: str, fill: Callable[[object], object] | None) -> None:
    """A collection can lose vectors behind the manifest's back (the server's data was lost,
    or the index was moved onto this server). A writer ``fill``s it from the vector cache;
    a reader, which may not write, is told what to run when the collection is empty."""
    have = store.count()
    if have == chunks:
        return
    if fill is not None:
        fill(store)
    elif have == 0:
        raise StoreError(f"{describe(url, store.name)} holds none of this index's {chunks} vectors",
                         hint="Run `rag index` (or `rag verify --repair`): it fills the collection "
                              "from the index's vector cache, without re-embedding.")
