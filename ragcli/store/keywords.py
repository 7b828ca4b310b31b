"""The read side of the manifest that retrieval uses: FTS5 keyword search, the idf of
query terms, and the files a filter (path glob, tag, dates) lets through."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Sequence

WEIGHTS = (3.0, 2.0, 1.0)  # bm25 column weights: title (with aliases), heading path, text


def keyword_search(db: sqlite3.Connection, match: str, limit: int, paths: Sequence[str] | None = None,
                   rowids: tuple[int, int] | None = None) -> list[tuple[str, float]]:
    """The top ``limit`` (chunk id, bm25 score with higher = better) for an FTS5 MATCH
    expression, within the files ``paths`` when given, among the chunks whose rowid is in
    ``[low, high)`` when ``rowids`` is given (threads rank a large index in parts; FTS5
    seeks to the range, and bm25 is the same as over the whole index).

    Title (with aliases) weighs 3, the heading path 2, the text 1: a term in a note's name
    says more about what the note is about than the same term in passing.

    The path list goes in as JSON (``json_each``), not through a temp table: writing a temp
    table opens a transaction that a reader never commits, and a long-lived reader (chat,
    the watcher's socket) would then see the index as it was at that moment forever.
    """
    if paths is not None and not paths:
        return []
    params: list = [*WEIGHTS, match]
    within = ""
    if rowids is not None:
        within = " AND chunks_fts.rowid >= ? AND chunks_fts.rowid < ?"
        params += rowids
    if paths is not None:
        sql = ("SELECT c.id, bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts JOIN chunks c"
               f" ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?{within}"
               " AND c.path IN (SELECT value FROM json_each(?)) ORDER BY s LIMIT ?")
        params.append(json.dumps(list(paths)))
    else:
        # Rank inside the keyword index, then look up only the winners' ids: joining every
        # match to its chunk row first cost 1.5-2x the time at 168k chunks (MDN), where a
        # query of common words matches 10-30k of them.
        sql = ("SELECT c.id, f.s FROM (SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts"
               f" WHERE chunks_fts MATCH ?{within} ORDER BY s LIMIT ?) f"
               " JOIN chunks c ON c.rowid = f.rowid ORDER BY f.s")
    try:
        rows = db.execute(sql, (*params, limit)).fetchall()
    except sqlite3.OperationalError:
        return []  # a query FTS5 cannot parse finds nothing rather than failing the search
    return [(cid, -score) for cid, score in rows]


def keyword_scores(db: sqlite3.Connection, match: str, ids: Sequence[str]) -> dict[str, float]:
    """The bm25 (higher = better) of the chunks ``ids`` that match, for hybrid search to
    give the vector side's candidates their keyword score.

    The unary ``+`` keeps SQLite from handing ``rowid IN`` to FTS5 as one lookup per id:
    each lookup is a new FTS5 scan that counts every term's documents again for bm25's idf
    (50 ids: 46 ms at 168k chunks). Filtering the one scan's rows computes bm25 for the
    candidates only (4.5 ms); ranking every match to find the top costs 30.
    """
    if not ids:
        return {}
    sql = ("SELECT c.id, f.s FROM (SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts"
           " WHERE chunks_fts MATCH ? AND +rowid IN (SELECT rowid FROM chunks WHERE id IN"
           " (SELECT value FROM json_each(?)))) f JOIN chunks c ON c.rowid = f.rowid")
    try:
        rows = db.execute(sql, (*WEIGHTS, match, json.dumps(list(ids)))).fetchall()
    except sqlite3.OperationalError:
        return {}
    return {cid: -score for cid, score in rows}


def keyword_idf(db: sqlite3.Connection, terms: Sequence[str]) -> list[float]:
    """FTS5's bm25 idf of each term (a quoted FTS5 string), over all chunks.

    ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6, as FTS5 computes it, so a
    query's best possible bm25 is about ``(k1 + 1) * sum(idf)`` (k1 = 1.2).
    """
    total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    return [max(math.log((total - n + 0.5) / (n + 0.5)), 1e-6) for n in keyword_df(db, terms)]


def keyword_df(db: sqlite3.Connection, terms: Sequence[str]) -> list[int]:
    """How many chunks hold each term (a quoted FTS5 string); 0 for one FTS5 cannot read."""
    result = []
    for term in terms:
        try:
            result.append(db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?",
                                     (term,)).fetchone()[0])
        except sqlite3.OperationalError:
            result.append(0)
    return result


def holds_phrase(db: sqlite3.Connection, words: Sequence[str]) -> bool:
    """Does some chunk hold these words one after the other (as FTS5 reads them: case and
    the stemmer's endings aside, punctuation between them allowed)?"""
    return _any_match(db, '"' + " ".join(w.replace('"', "") for w in words) + '"', unreadable=False)


def _any_match(db: sqlite3.Connection, match: str, unreadable: bool) -> bool:
    """Does some chunk match this FTS5 expression; ``unreadable`` for one FTS5 cannot read."""
    try:
        return db.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", (match,)).fetchone() is not None
    except sqlite3.OperationalError:
        return unreadable


_VOCAB = "ragcli_vocab"  # a temp fts5vocab table over chunks_fts: one row per indexed term


def respell(db: sqlite3.Connection, terms: Sequence[str],
            leave: Callable[[str], bool] | None = None) -> dict[str, str]:
    """A spelling slip's fix: for each query word (6+ letters) that is in no chunk, the
    indexed term nearest to it, when one is a letter away (two for 10+ letters).

    Indexed terms are porter stems ("synchron" for "synchronize"), so a word is compared
    with a stem through the word's first letters (its ending may be the suffix porter
    drops): "syncronize" -> "synchron", "recieve" -> "receiv", "obsidain" -> "obsidian".
    Of equally near terms the one in most chunks wins. The answer is a stem, meant for a
    prefix query (``"synchron"*``). The vocabulary table is a temp table made once per
    connection; making it writes only the connection's temp schema (no transaction on
    the index), so a long-lived reader keeps seeing new writes. ``leave``: words in no chunk
    that are still not slips (real words); asked last, since it is the dearer question for a
    one-off search (``retrieve.spelling.is_known_word`` reads a 30k-word vocabulary, ~0.01 s).
    """
    fixes: dict[str, str] = {}
    for word in dict.fromkeys(terms):
        if len(word) < 6 or not word.isalpha() or _in_some_chunk(db, word) or (leave and leave(word)):
            continue
        limit = 2 if len(word) >= 10 else 1
        letters = set(word)
        best: tuple[int, int, str] | None = None
        for term, docs in _vocab_near(db, word):
            if len(set(term) - letters) > limit:  # cheap: more new letters than edits allowed
                continue
            distance = _stem_distance(word, term, limit)
            if distance <= limit and (best is None or (distance, -docs) < best[:2]):
                best = (distance, -docs, term)
        if best is not None:
            fixes[word] = best[2]
    return fixes


def _in_some_chunk(db: sqlite3.Connection, word: str) -> bool:
    return _any_match(db, f'"{word}"', unreadable=True)  # not a word FTS5 takes: leave it alone


def _vocab_near(db: sqlite3.Connection, word: str) -> list[tuple[str, int]]:
    """Indexed terms that start with the word's first letter and could be its stem."""
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_VOCAB} USING fts5vocab(main, chunks_fts, row)")
    low, high = word[0], chr(ord(word[0]) + 1)
    return db.execute(f"SELECT term, doc FROM temp.{_VOCAB} WHERE term >= ? AND term < ?"
                      " AND length(term) BETWEEN ? AND ?",
                      (low, high, max(len(word) - 5, 4), len(word) + 2)).fetchall()


# Endings the porter stemmer may drop (or leave a letter of): what a word may have past its stem.
_ENDINGS = frozenset("""
s es ed ing ings ly e y ies ied ize ise izes ises ized ised izing ising ation ations ion ions
ness ment ments able ible al ance ence er ers ive ity ous ful ism ist ic
""".split()) | {""}


def _stem_distance(word: str, stem: str, limit: int) -> int:
    """Edits between ``stem`` and the word's first letters, when what is left of the word
    is an ending porter drops; limit + 1 when farther."""
    best = limit + 1
    for cut in range(max(len(stem) - limit, 1), min(len(stem) + limit, len(word)) + 1):
        if word[cut:] in _ENDINGS:
            best = min(best, _edits(word[:cut], stem, limit))
    return best


def _edits(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (adjacent swaps count one), capped at limit + 1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if prev2 is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        if min(row) > limit:
            return limit + 1
        prev2, prev = prev, row
    return min(prev[-1], limit + 1)


def dated_files(db: sqlite3.Connection) -> dict[str, tuple[str, str, frozenset[str]]]:
    """Every file with a date (a note's front matter, a report's period end): its date, title
    and tags."""
    rows = db.execute("SELECT path, date, title, tags FROM files WHERE date IS NOT NULL")
    return {path: (date, title or "", frozenset(t for t in (tags or "").split("|") if t))
            for path, date, title, tags in rows}


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
