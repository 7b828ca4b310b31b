"""The index store: a closed room. Everything goes through ``Index``; ``sqlite3`` and
``chromadb`` are imported nowhere outside this package, and only the store commits.

- ``index``: ``Index`` (open, plan, apply) and the write protocol; its parts: ``searching``
  (keyword and vector reads), ``repair`` (recovery, rebuilds) and ``live`` (when the vector
  store opens, reopens and is let go);
- ``manifest``: the SQLite truth (files, chunks, FTS5 keywords, vector cache);
- ``vectors``: Chroma, on disk or on a server; ``sync``: Chroma put in step from the cache;
- ``recovery``: crash leftovers, the child-process probe, the atomic folder swap;
- ``check``: the store's own consistency checks, for ``rag verify``;
- ``fingerprint``: what built the index; ``lock``: one writer at a time.
"""

from .fingerprint import Fingerprint
from .index import FileUpdate, Index, SyncPlan, index_exists
from .lock import read_holder
from .manifest import FileRecord, StoredChunk, content_hash, vector_key
from .paths import CHROMA_NAME, LOCK_NAME, MANIFEST_NAME

__all__ = ["CHROMA_NAME", "FileRecord", "FileUpdate", "Fingerprint", "Index", "LOCK_NAME", "MANIFEST_NAME",
           "StoredChunk", "SyncPlan", "content_hash", "index_exists", "read_holder",
           "vector_key"]
