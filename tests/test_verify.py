"""`rag verify`: it passes on a sound index, finds each kind of damage (made for real: rows
deleted behind the index's back, Chroma changed directly, files truncated, notes edited or
removed), and `--repair` brings the index back to what a clean build of the same files gives.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, chroma_do, clean_build, index_state, ok, rag, sql, verify_json, write_vault


# ------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def built(tmp_path_factory, models_dir):
    """One vault indexed once, plus its clean state; each test works on a copy of both."""
    base = tmp_path_factory.mktemp("verify")
    notes = write_vault(base / "notes", notes=8)
    home = base / "home"
    home.mkdir()
    env = {"RAG_MODELS_DIR": str(models_dir)}
    ok(rag("index", notes, home=home, env=env))
    return notes, home, index_state(home)


@pytest.fixture
def case(built, tmp_path):
    """A private copy of the built vault and index (same absolute note paths)."""
    notes, home, state = built
    copy = tmp_path / "case-home"
    shutil.copytree(home, copy, symlinks=True)
    backup = tmp_path / "notes-backup"
    shutil.copytree(notes, backup)
    yield notes, copy, state
    shutil.rmtree(notes)
    shutil.copytree(backup, notes)


# ------------------------------------------------------------------------------- tests


def test_sound_index_verifies(case):
    notes, home, state = case
    code, report = verify_json(home)
    assert code == 0 and report["ok"] is True and report["problems"] == []
    assert report["files"] == len(state[0]) and report["chunks"] == len(state[1]) == report["vectors"]
    proc = ok(rag("verify", home=home))
    assert b"OK" in proc.stdout


def test_no_index_is_its_own_error(tmp_path):
    proc = rag("verify", home=tmp_path / "empty")
    assert proc.returncode == 4 and b"Traceback" not in proc.stderr


def _damage_and_repair(notes: Path, home: Path, state, expected_kinds: set[str]) -> dict:
    code, report = verify_json(home)
    assert code == 8, report
    assert not report["ok"]
    kinds = {p["kind"] for p in report["problems"]}
    assert expected_kinds <= kinds, kinds
    for p in report["problems"]:
        assert set(p) == {"kind", "path", "detail"}
    text = rag("verify", home=home)
    assert text.returncode == 8 and b"Traceback" not in text.stderr
    code, fixed = verify_json(home, "--repair")
    assert code == 0, fixed
    assert fixed["ok"] and fixed["repaired"], fixed
    assert verify_json(home)[0] == 0
    return fixed


def test_deleted_and_changed_files_are_found_and_reindexed(case, tmp_path):
    notes, home, _state = case
    victims = sorted(notes.rglob("*.md"))
    victims[0].unlink()
    with victims[1].open("a", encoding="utf-8") as fh:
        fh.write("\n## Added later\n\nA brand new paragraph about zanzibar quokkas.\n")
    code, report = verify_json(home)
    found = {(p["kind"], p["path"]) for p in report["problems"]}
    assert ("file-missing", str(victims[0])) in found
    assert ("file-changed", str(victims[1])) in found
    _damage_and_repair(notes, home, None, {"file-missing", "file-changed"})
    assert index_state(home) == clean_build(notes, tmp_path / "clean")
    hits = json.loads(ok(rag("search", "zanzibar quokkas", "--json", "--mode", "keyword", home=home)).stdout)
    assert hits["results"] and hits["results"][0]["path"] == str(victims[1])


def test_keyword_rows_missing_or_stale_are_found_and_rebuilt(case):
    notes, home, state = case
    # a chunk's keywords dropped, another's indexed with other text, a size row lost
    sql(home, "INSERT INTO chunks_fts(chunks_fts, rowid, title, heading, text) SELECT 'delete', rowid,"
              " title || ' ' || aliases, heading, text FROM chunks ORDER BY rowid LIMIT 1")
    sql(home, "INSERT INTO chunks_fts(chunks_fts, rowid, title, heading, text) SELECT 'delete', rowid,"
              " title || ' ' || aliases, heading, text FROM chunks ORDER BY rowid LIMIT 1 OFFSET 1")
    sql(home, "INSERT INTO chunks_fts(rowid, title, heading, text) SELECT rowid, 'other', 'words', 'entirely'"
              " FROM chunks ORDER BY rowid LIMIT 1 OFFSET 1")
    sql(home, "DELETE FROM chunks_fts_docsize WHERE id = (SELECT max(rowid) FROM chunks)")
    code, report = verify_json(home)
    assert sum(p["kind"] == "keyword-index" and p["path"] != "" for p in report["problems"]) >= 2, report
    _damage_and_repair(notes, home, state, {"keyword-index"})
    assert index_state(home) == state
    # aliases are searchable again after the rebuild (FTS5's own 'rebuild' would lose them)
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    db.close()


def test_damaged_keyword_index_structure_is_found_and_rebuilt(case):
    notes, home, state = case
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    rows = db.execute("SELECT id, length(block) FROM chunks_fts_data WHERE length(block) > 64").fetchall()
    for rowid, size in rows:
        db.execute("UPDATE chunks_fts_data SET block = ? WHERE id = ?", (os.urandom(size), rowid))
    db.commit()
    db.close()
    _damage_and_repair(notes, home, state, {"keyword-index"})
    assert index_state(home) == state


def test_keyword_rows_of_deleted_chunks_are_found(case):
    notes, home, state = case
    # delete a chunk row without its trigger: FTS keeps rows of a chunk that is gone
    sql(home, "DROP TRIGGER chunks_ad")
    sql(home, "DELETE FROM chunks WHERE rowid = (SELECT min(rowid) FROM chunks)")
    sql(home, "CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN INSERT INTO chunks_fts(chunks_fts,"
              " rowid, title, heading, text) VALUES ('delete', old.rowid, old.title || ' ' || old.aliases,"
              " old.heading, old.text); END")
    code, report = verify_json(home)
    assert code == 8 and {"keyword-index", "vectors-extra"} <= {p["kind"] for p in report["problems"]}
    code, fixed = verify_json(home, "--repair")
    assert code == 0, fixed
    assert verify_json(home)[0] == 0


def test_chroma_missing_extra_and_stale_vectors_are_found_and_rebuilt(case):
    notes, home, state = case
    some = sorted(state[1])[:3]
    chroma_do(home, f"col.delete(ids={some[:1]!r})\n"
                    f"col.upsert(ids=['not-a-chunk'], embeddings=np.ones((1, 384), dtype=np.float32),"
                    f" metadatas=[{{'path': '/nowhere.md'}}])\n"
                    f"col.upsert(ids={some[1:2]!r}, embeddings=np.ones((1, 384), dtype=np.float32),"
                    f" metadatas=col.get(ids={some[1:2]!r})['metadatas'])\n"
                    f"col.upsert(ids={some[2:3]!r}, embeddings=col.get(ids={some[2:3]!r}, include=['embeddings'])"
                    f"['embeddings'], metadatas=[{{'path': '/elsewhere.md'}}])\n")
    fixed = _damage_and_repair(notes, home, state, {"vectors-missing", "vectors-extra", "vector-stale",
                                                    "vector-path"})
    assert any("swapped" in a for a in fixed["repaired"])
    assert index_state(home) == state
    leftovers = [p.name for p in (home / "index").iterdir() if p.name.startswith("chroma.")]
    assert leftovers == []


def test_truncated_chroma_store_is_found_in_a_child_and_rebuilt(case):
    notes, home, state = case
    for path in (home / "index" / "chroma").rglob("*"):
        if path.is_file() and path.stat().st_size > 0:
            with path.open("r+b") as fh:
                fh.truncate(path.stat().st_size // 3)
    _damage_and_repair(notes, home, state, {"vector-store-broken"})
    assert index_state(home) == state


def test_missing_chroma_folder_is_rebuilt(case):
    notes, home, state = case
    shutil.rmtree(home / "index" / "chroma")
    _damage_and_repair(notes, home, state, {"vector-store-missing"})
    assert index_state(home) == state


def test_interrupted_write_is_reported_and_finished(case):
    notes, home, state = case
    chroma_do(home, "col.upsert(ids=['ahead-of-manifest'], embeddings=np.ones((1, 384), dtype=np.float32),"
                    " metadatas=[{'path': '/x.md'}])\n")
    sql(home, "INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_dirty', '1')")
    _damage_and_repair(notes, home, state, {"interrupted-write", "vectors-extra"})
    assert index_state(home) == state


def test_missing_cached_vector_means_the_chunk_is_embedded_again(case):
    # A chunk with no cached vector waits for one (as phase one leaves it); Chroma holding a
    # vector the cache lacks breaks the protocol: repair drops it and embeds the chunk again.
    notes, home, state = case
    sql(home, "DELETE FROM vectors WHERE key = (SELECT vec_key FROM chunks ORDER BY rowid LIMIT 1)")
    fixed = _damage_and_repair(notes, home, state, {"vectors-extra"})
    assert any("no vector yet" in action for action in fixed["repaired"]), fixed
    assert index_state(home) == state


def test_a_cached_vector_of_another_size_means_the_file_is_embedded_again(case):
    notes, home, state = case
    sql(home, "UPDATE vectors SET vec = zeroblob(16) WHERE key = (SELECT vec_key FROM chunks ORDER BY rowid LIMIT 1)")
    _damage_and_repair(notes, home, state, {"vector-cache-missing"})
    assert index_state(home) == state


def test_missing_note_centroid_is_found_and_restored_from_the_cache(case):
    notes, home, state = case
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    path, centroid = db.execute("SELECT path, centroid FROM notes ORDER BY path LIMIT 1").fetchone()
    db.close()
    sql(home, "DELETE FROM notes WHERE path = (SELECT min(path) FROM notes)")
    code, report = verify_json(home)
    assert code == 8 and any(p["kind"] == "note-centroid-missing" and p["path"] == path for p in report["problems"])
    code, fixed = verify_json(home, "--repair")
    assert code == 0 and fixed["ok"], fixed
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    assert db.execute("SELECT centroid FROM notes WHERE path = ?", (path,)).fetchone()[0] == centroid
    db.close()
    assert index_state(home) == state


def test_corrupt_manifest_is_set_aside_and_the_roots_indexed_again(case):
    notes, home, state = case
    manifest = home / "index" / "manifest.sqlite"
    data = bytearray(manifest.read_bytes())
    rng = random.Random(7)
    for _ in range(64):  # scribble over pages past the first (the header and roots survive)
        at = rng.randrange(4096, len(data) - 64)
        data[at:at + 64] = os.urandom(64)
    manifest.write_bytes(bytes(data))
    code, report = verify_json(home)
    assert code == 8 and report["problems"], report
    code, fixed = verify_json(home, "--repair")
    assert code == 0, fixed
    assert index_state(home) == state


def test_verify_reads_while_another_process_holds_the_write_lock(case):
    notes, home, state = case
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
         "from ragcli.store.lock import WriteLock\nWriteLock(Path(sys.argv[1]), 'watch').acquire()\n"
         "print('held', flush=True)\ntime.sleep(120)\n", str(home / "index" / "write.lock")],
        stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert holder.stdout.readline().strip() == b"held"
        code, report = verify_json(home)
        assert code == 0 and report.get("writer_active") is True
        proc = rag("verify", "--repair", home=home)  # nothing to repair: no lock needed
        assert proc.returncode == 0
        sql(home, "DELETE FROM chunks_fts_docsize WHERE id IN (SELECT rowid FROM chunks LIMIT 1)")
        proc = rag("verify", "--repair", home=home)  # repair needs the lock: a clear refusal
        assert proc.returncode == 7 and b"Traceback" not in proc.stderr, proc.stderr
    finally:
        holder.kill()
        holder.wait()
