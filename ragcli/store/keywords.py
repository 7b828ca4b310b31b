"""The read side of the manifest that retrieval uses: FTS5 keyword search, the idf of
query terms, and the files a filter (path glob, tag, dates) lets through."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence


def keyword_search(db: sqlite3.Connection, match: str, limit: int, paths: Sequence[str] | None = None,
                   weights: tuple[float, float, float] = (3.0, 2.0, 1.0),
                   ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
    """(chunk id, bm25 score with higher = better) for an FTS5 MATCH expression.

    ``paths`` limits the search to those files, ``ids`` to those chunks (hybrid search
    asks for the exact bm25 of candidates the vector side found). Title (with aliases)
    weighs 3, the heading path 2, the text 1: a term in a note's name says more about
    what the note is about than the same term in passing.

    The path and id lists go in as JSON (``json_each``), not through temp tables: writing
    a temp table opens a transaction that a reader never commits, and a long-lived reader
    (chat, the watcher's socket) would then see the index as it was at that moment forever.
    """
    params: list = [*weights, match]
    where = ""
    for column, values in (("path", paths), ("id", ids)):
        if values is not None:
            if not values:
                return []
            where += f" AND c.{column} IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(values)))
    sql = (f"SELECT c.id, bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts JOIN chunks c"
           f" ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?{where} ORDER BY s LIMIT ?")
    try:
        rows = db.execute(sql, (*params, limit)).fetchall()
    except sqlite3.OperationalError:
        return []  # a query FTS5 cannot parse finds nothing rather than failing the search
    return [(cid, -score) for cid, score in rows]


def keyword_idf(db: sqlite3.Connection, terms: Sequence[str]) -> list[float]:
    """FTS5's bm25 idf of each term (a quoted FTS5 string), over all chunks.

    ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, as FTS5 computes it, so a
    query's best possible bm25 is about ``(k1 + 1) * sum(idf)`` (k1 = 1.2).
    """
    total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    result = []
    for term in terms:
        try:
            n = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (term,)).fetchone()[0]
        except sqlite3.OperationalError:
            n = 0
        result.append(max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6))
    return result


def filter_paths(db: sqlite3.Connection, path_glob: str | None = None, tag: str | None = None,
                 since: str | None = None, until: str | None = None) -> list[str]:
    """Paths matching the filters: glob on the path, a tag, a date range (note date or mtime)."""
    clauses, params = [], []
    if path_glob:
        clauses.append("(path GLOB ? OR path GLOB ?)")
        params += [path_glob, f"*{path_glob}" if not path_glob.startswith(("/", "*")) else path_glob]
    if tag:
        clauses.append("tags LIKE ?")
        params.append(f"%|{tag.lower().lstrip('#')}|%")
    date_expr = "COALESCE(date, date(mtime_ns / 1000000000, 'unixepoch'))"
    if since:
        clauses.append(f"{date_expr} >= ?")
        params.append(since)
    if until:
        clauses.append(f"{date_expr} <= ?")
        params.append(until)
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    return [r[0] for r in db.execute(f"SELECT path FROM files{where}", params)]
