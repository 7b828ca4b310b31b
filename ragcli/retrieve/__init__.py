"""Retrieval: vector (Chroma), keyword (SQLite FTS5), or both fused (``search``, ``fusion``)."""

from .fusion import fts_query, fuse_convex
from .searcher import CANDIDATES, MODES, Filters, Fusion, Searcher, search

__all__ = ["CANDIDATES", "MODES", "Filters", "Fusion", "Searcher", "fts_query", "fuse_convex", "search"]
