"""`rag index` in two phases: keyword rows first, vectors after, each resumable.

A real `rag index` is killed in each phase (when the index is seen to be in it, never after
a guessed delay). Afterwards keyword search already finds what phase one wrote; search and
status say how many chunks wait for a vector; `rag verify` is clean (a chunk waiting for its
vector is a state, not damage); the next run embeds only what is left (nothing twice) and
the index equals a clean build. Hybrid ranking of chunks without a vector is checked on
real notes: they rank by their keywords, without falling behind the embedded ones.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from helpers import ok, rag, rag_popen, verify_json, write_vault

from test_crash import _meta, assert_like_clean_build, big_note, check_left_behind, kill_at


def _counts(home: Path) -> tuple[int, int, int]:
    """(chunk rows, chunks with a cached vector, cached vectors) as committed now."""
    try:
        db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            vectored = db.execute("SELECT count(*) FROM chunks WHERE vec_key IN (SELECT key FROM vectors)"
                                  ).fetchone()[0]
            vectors = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0, 0, 0
    return chunks, vectored, vectors


def _distinct_keys(home: Path) -> int:
    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(DISTINCT vec_key) FROM chunks").fetchone()[0]
    finally:
        db.close()


def _resume(notes: Path, home: Path, clean: Path, cached_before: int) -> None:
    """The next run embeds exactly what was not cached; then all is as a clean build."""
    report = json.loads(ok(rag("index", notes, "--json", home=home)).stdout)
    assert cached_before + report["embedded"] == _distinct_keys(home), (cached_before, report)
    code, checked = verify_json(home)
    assert code == 0 and checked["vectors_pending"] == 0, checked
    assert_like_clean_build(notes, home, clean)


def test_a_text_in_two_batches_in_a_row_is_embedded_once(tmp_path):
    # Phase two embeds the next batch while it writes the last one. Copies of 100 one-chunk
    # notes: the copies' chunks come in the batch after the originals', with the same vector
    # key, while the originals' vectors are still being written.
    for folder in ("a", "b"):
        for i in range(100):
            note = tmp_path / "notes" / folder / f"note {i:03}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"# Note {i}\n\nThe {i}th seed packet holds {i * 7} seeds of kale.\n")
    home = tmp_path / "home"
    report = json.loads(ok(rag("index", tmp_path / "notes", "--json", home=home)).stdout)
    assert report["chunks_added"] == 200
    assert report["embedded"] == _distinct_keys(home) == 100, report
    code, checked = verify_json(home)
    assert code == 0 and checked["vectors_pending"] == 0, checked


def test_killed_in_phase_one_keyword_rows_first_then_resumed(tmp_path):
    # more files than a phase-one batch holds (FLUSH_FILES), so a batch is committed mid-phase
    notes = write_vault(tmp_path / "notes", notes=200, seed=23)
    home = tmp_path / "home"
    proc = rag_popen("index", notes, home=home)
    # phase one has committed chunk rows and no vector exists yet: the run is in phase one
    kill_at(proc, lambda: _counts(home)[0] > 0 and _counts(home)[2] == 0, "phase one's first batch")
    check_left_behind(home, "phase one")
    chunks, vectored, cached = _counts(home)
    assert chunks > 0 and vectored == 0
    found = json.loads(ok(rag("search", "--json", "--mode", "keyword", "Note 0", home=home)).stdout)
    assert found["results"] and found["vectors_pending"]["without_vector"] == chunks
    code, checked = verify_json(home)
    assert code == 0 and checked["vectors_pending"] == chunks, checked
    _resume(notes, home, tmp_path / "clean", cached)


def test_killed_in_phase_two_search_says_so_and_the_next_run_finishes(tmp_path):
    from ragcli.pipeline.indexing import FLUSH_CHUNKS

    notes = write_vault(tmp_path / "notes", notes=6, seed=24)
    big_note(notes / "zz long.md", sections=FLUSH_CHUNKS * 3)
    home = tmp_path / "home"
    proc = rag_popen("index", notes, home=home)
    # a batch of vectors committed with more to embed, and no write under way: the run is in
    # phase two, embedding its next batch
    kill_at(proc, lambda: 0 < _counts(home)[1] < _counts(home)[0] and _meta(home, "vectors_dirty") == "0",
            "phase two, between two batches")
    check_left_behind(home, "phase two")
    chunks, vectored, cached = _counts(home)
    assert 0 < vectored < chunks

    # every note is searchable already; the one line on stderr and the JSON say what is missing
    proc = ok(rag("search", "--json", "alpha kappa sigma number", home=home))
    data = json.loads(proc.stdout)
    assert data["results"] and data["vectors_pending"] == {"without_vector": chunks - vectored,
                                                           "chunks": chunks}
    assert b"have no vector yet" in proc.stderr
    status = json.loads(ok(rag("status", "--json", home=home)).stdout)
    assert status["phase"] == "embedding interrupted" and status["vectors_pending"] == chunks - vectored
    assert b"Phase:" in ok(rag("status", home=home)).stdout
    code, checked = verify_json(home)
    assert code == 0 and checked["vectors_pending"] == chunks - vectored, checked
    _resume(notes, home, tmp_path / "clean", cached)
    # once all is embedded, nothing more is said
    proc = ok(rag("search", "--json", "alpha kappa sigma number", home=home))
    assert "vectors_pending" not in json.loads(proc.stdout) and b"no vector" not in proc.stderr


def test_verify_repair_finishes_phase_two(tmp_path):
    from ragcli.pipeline.indexing import FLUSH_CHUNKS

    notes = tmp_path / "notes"
    notes.mkdir()
    big_note(notes / "long.md", sections=FLUSH_CHUNKS * 2)
    home = tmp_path / "home"
    proc = rag_popen("index", notes, home=home)
    kill_at(proc, lambda: 0 < _counts(home)[1] < _counts(home)[0], "phase two's first batch")
    code, fixed = verify_json(home, "--repair")
    assert code == 0 and any("no vector yet" in a for a in fixed.get("repaired", [])), fixed
    chunks, vectored, _cached = _counts(home)
    assert chunks == vectored
    assert verify_json(home)[0] == 0


def test_chunks_without_a_vector_rank_by_keywords_without_a_cliff(tmp_path):
    """The same notes, once fully embedded and once with half of them waiting for vectors:
    a note found by its exact words stays on top either way, and the notes waiting are not
    pushed below the embedded ones for the query they match best."""
    notes = tmp_path / "notes"
    notes.mkdir()
    topics = {"sourdough": "Feed the sourdough starter equal weights of flour and water every day.",
              "tomatoes": "Tomatoes need full sun, deep watering twice a week and a stake.",
              "bicycle": "Oil the bicycle chain monthly and check the tyre pressure before rides.",
              "espresso": "Grind the espresso beans fine and pull a 25 second shot.",
              "passwords": "Reset a forgotten password from Settings, Account, Reset password.",
              "compost": "Turn the compost heap weekly; keep it as damp as a wrung sponge."}
    for name, text in topics.items():
        (notes / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n", encoding="utf-8")
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    full = {q: json.loads(ok(rag("search", "--json", q, "-k", "3", home=home)).stdout)["results"]
            for q in ("sourdough starter flour", "bicycle chain tyre", "compost heap damp")}
    db = sqlite3.connect(home / "index" / "manifest.sqlite")  # half the notes lose their vectors
    db.execute("DELETE FROM vectors WHERE key IN (SELECT vec_key FROM chunks WHERE path LIKE '%sourdough%'"
               " OR path LIKE '%bicycle%' OR path LIKE '%compost%')")
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_pending', '1')")
    db.commit()
    db.close()
    for query, before in full.items():
        after = json.loads(ok(rag("search", "--json", query, "-k", "3", home=home)).stdout)
        assert after["vectors_pending"]["without_vector"] == 3
        top = after["results"][0]
        assert Path(top["path"]).name == Path(before[0]["path"]).name, (query, after["results"])
        assert top["vector_score"] is None and top["score"] >= max(r["score"] for r in after["results"])


def test_a_watcher_answering_while_vectors_wait_says_so_like_a_search_in_process(rag_home, tmp_path):
    """`rag search` and `rag ask` answered through the watcher's socket print the same notice
    and JSON keys as in their own process. The serving side is the watcher's own (its socket
    server over the writer it holds), so nothing embeds the waiting chunks meanwhile."""
    from ragcli.config import load_config
    from ragcli.embed import make_embedder
    from ragcli.serve.server import SocketServer
    from ragcli.store import Index

    notes = write_vault(tmp_path / "notes", notes=6, seed=31)
    ok(rag("index", notes))
    db = sqlite3.connect(rag_home / "index" / "manifest.sqlite")  # phase two stopped half way
    keys = [k for (k,) in db.execute("SELECT DISTINCT vec_key FROM chunks ORDER BY vec_key")]
    db.executemany("DELETE FROM vectors WHERE key = ?", [(k,) for k in keys[: len(keys) // 2]])
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_pending', '1')")
    db.commit()
    db.close()
    cold = rag("search", "--json", "alpha kappa sigma", env={"RAG_DAEMON": "off"})
    expected = json.loads(ok(cold).stdout)["vectors_pending"]
    assert expected["without_vector"] > 0 and b"have no vector yet" in cold.stderr

    config = load_config()
    writer = Index.open_writer(config, role="watch")
    embedder = make_embedder(config)
    server = SocketServer(config, status=lambda: {"serving": "ready"}).start()
    try:
        server.warm(writer, embedder)
        warm = ok(rag("search", "--json", "alpha kappa sigma", env={"RAG_DAEMON": "require"}))
        assert json.loads(warm.stdout) == json.loads(cold.stdout)
        assert b"have no vector yet" in warm.stderr
        asked = ok(rag("ask", "--quotes", "--json", "alpha kappa sigma", env={"RAG_DAEMON": "require"}))
        assert json.loads(asked.stdout)["vectors_pending"] == expected and b"have no vector yet" in asked.stderr
        assert server.requests == 2  # both went through the socket
    finally:
        server.close()
        embedder.close()
        writer.close()
