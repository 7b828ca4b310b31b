"""The two top-level flows, put together from the stages: ``index`` (discover -> parse ->
chunk -> embed -> store) and ``answer`` (retrieve -> gate -> prompt -> generate -> check),
plus the ``Session`` that owns what they load and ``ChatSession`` for conversations (made by
``ragcli.Notes.chat``, which holds the models between questions)."""

from .indexing import Indexer, IndexReport, index, remembered_roots
from .session import Session

__all__ = ["IndexReport", "Indexer", "Session", "index", "remembered_roots"]
