"""The vectors of an index on a Chroma server (``chroma_url``): which collection is this index's.

One server can hold the vectors of many indexes (several laptops, or several index folders
on one): each index has its own collection, named once and recorded in its manifest
(``meta.chroma_collection``), so the name survives a move of the index folder and two
laptops whose index folders have the same path never share a collection. Its first writer
names it (``Index.open_writer``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from ..errors import StoreError
from .vectors import COLLECTION

META_KEY = "chroma_collection"


def remote_collection(get_meta: Callable[[str], str | None]) -> str:
    """This index's collection on the Chroma server (``get_meta`` reads the manifest's meta).
    An index no writer has opened since names were recorded (all of them rebuild for the
    chunker anyway) gets the default name, which its reader finds empty and says so."""
    return get_meta(META_KEY) or COLLECTION


def new_collection_name() -> str:
    return f"ragcli-{uuid.uuid4().hex[:16]}"


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
