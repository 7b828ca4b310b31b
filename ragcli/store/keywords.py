"""The read side of the manifest that retrieval uses: FTS5 keyword search, the idf of
query terms, and the files a filter (path glob, tag, dates) lets through."""

from __future__ import annotations

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
    """
    params: list = [*weights, match]
    where = ""
    if paths is not None:
        if not paths:
            return []
        _temp_paths(db, paths)
        where = " AND c.path IN (SELECT path FROM temp.allowed)"
    if ids is not None:
        if not ids:
            return []
        db.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id TEXT PRIMARY KEY)")
        db.execute("DELETE FROM temp.wanted")
        db.executemany("INSERT OR IGNORE INTO temp.wanted(id) VALUES (?)", [(i,) for i in ids])
        where += " AND c.id IN (SELECT id FROM temp.wanted)"
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


def _temp_paths(db: sqlite3.Connection, paths: Sequence[str]) -> None:
    db.execute("CREATE TEMP TABLE IF NOT EXISTS allowed (path TEXT PRIMARY KEY)")
    db.execute("DELETE FROM temp.allowed")
    db.executemany("INSERT OR IGNORE INTO temp.allowed(path) VALUES (?)", [(p,) for p in paths])


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
