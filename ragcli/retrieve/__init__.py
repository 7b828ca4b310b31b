"""Retrieval: vector (Chroma), keyword (SQLite FTS5), or both fused (``Searcher``, ``fusion``)."""

from .fusion import fts_query, fuse_convex
from .searcher import CANDIDATES, MODES, Filters, Fusion, Searcher

__all__ = ["CANDIDATES", "MODES", "Filters", "Fusion", "Searcher", "fts_query", "fuse_convex"]
