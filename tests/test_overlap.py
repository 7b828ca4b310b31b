"""Phase two beside phase one (``index_overlap``): on a GPU, `rag index` embeds phase one's
committed batches while phase one goes on. It is off by default on the CPU; these tests force
it on (``RAG_INDEX_OVERLAP=on``) and check, with real runs, that it builds the same index as
the phases in turn, and that a run killed while both go on resumes, embedding nothing twice.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import index_state, ok, rag, rag_popen, verify_json

from test_crash import _meta, assert_like_clean_build, check_left_behind
from test_phases import _counts, _distinct_keys

ON = {"RAG_INDEX_OVERLAP": "on"}
# Enough notes that phase one outlasts the embedding of its first batch (~5 s on 2 loaded cores).
# A faster machine (a lent H200's 16 cores) ends phase one first: then the run is made again
# with four times the notes, until the phases are seen side by side.
NOTES = (1000, 4000, 16000)


def _many_short_notes(folder: Path, count: int) -> Path:
    """Many one-chunk notes: phase one commits many batches, each cheap to embed, so the
    embedder has batches done while phase one still writes (on any machine)."""
    for i in range(count):
        note = folder / f"group {i % 7}" / f"note {i:04}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# Note {i}\n\nSeed packet {i} holds {i * 7} seeds of kale.\n", encoding="utf-8")
    return folder


def _files(home: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT count(*) FROM files").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def _rows(home: Path, rowids: bool = True) -> dict:
    """Everything a build wrote that does not depend on when: files (not their indexing time),
    chunk rows (with their rowids, unless told not to), keyword matches, cached vectors, note
    centroids."""
    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    chunks = "SELECT * FROM chunks ORDER BY rowid" if rowids else "SELECT * FROM chunks ORDER BY id"
    match = "SELECT {} FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH"
    try:
        return {
            "files": db.execute("SELECT path, size, hash, title, tags FROM files ORDER BY path").fetchall(),
            "chunks": [row if rowids else row[1:] for row in db.execute(chunks)],
            "kale": db.execute(match.format("c.rowid" if rowids else "c.id") + " 'seed AND kale' ORDER BY 1"
                               ).fetchall(),
            "vectors": dict(db.execute("SELECT key, vec FROM vectors")),
            "notes": dict(db.execute("SELECT path, centroid FROM notes")),
        }
    finally:
        db.close()


def _assert_same(mine: dict, theirs: dict) -> None:
    """The rows alike; each vector and centroid its twin to float rounding (cosine > 0.99999):
    a text packed into another llama.cpp batch gets its vector from matrix products of another
    shape (up to 1e-4 apart here)."""
    for part in ("files", "chunks", "kale"):
        assert mine[part] == theirs[part], part
    for part in ("vectors", "notes"):
        assert mine[part].keys() == theirs[part].keys(), part
        keys = sorted(mine[part])
        a, b = (np.stack([np.frombuffer(rows[k], dtype=np.float32) for k in keys])
                for rows in (mine[part], theirs[part]))
        assert float(np.min(np.sum(a * b, axis=1))) > 0.99999, (part, float(np.abs(a - b).max()))


def _reached(proc: subprocess.Popen, stage) -> bool:
    """Poll ``stage`` while ``proc`` runs: True as soon as it holds, False if the run ends first."""
    while proc.poll() is None:
        if stage():
            return True
        time.sleep(0.005)
    return False


def _overlapping_run(tmp_path: Path, *args, also=lambda home: True, **popen):
    """Start `rag index` with the overlap on, over NOTES' counts in turn, until a run is seen
    with vectors committed while phase one has notes left to write (and ``also(home)``).
    Returns (count, notes, home, proc) with that run still going; a run that ends first must
    have succeeded."""
    for count in NOTES:
        notes = _many_short_notes(tmp_path / f"notes {count}", count)
        home = tmp_path / f"home {count}"
        proc = rag_popen("index", notes, *args, home=home, env=ON, **popen)
        if _reached(proc, lambda: _counts(home)[1] > 0 and _files(home) < count and also(home)):
            return count, notes, home, proc
        _, err = proc.communicate()
        assert proc.returncode == 0, err[-2000:]
    pytest.fail(f"phase two never ran beside phase one, with up to {count} notes")


def test_overlapping_phases_build_the_index_the_phases_in_turn_build(tmp_path):
    count, notes, overlapping, proc = _overlapping_run(tmp_path, "--json", stdout=subprocess.PIPE)
    out, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    in_turn = tmp_path / "in turn"
    reports = {in_turn: json.loads(ok(rag("index", notes, "--json", home=in_turn)).stdout),
               overlapping: json.loads(out)}
    for home in (in_turn, overlapping):
        assert reports[home]["embedded"] == _distinct_keys(home) == count
        code, checked = verify_json(home)
        assert code == 0 and checked["vectors_pending"] == 0, (home, checked)
    rows = _rows(overlapping)
    assert len(rows["chunks"]) == len(rows["kale"]) == count
    _assert_same(rows, _rows(in_turn))
    assert index_state(overlapping) == index_state(in_turn)


def test_killed_while_both_phases_run_resumes_and_embeds_nothing_twice(tmp_path):
    # the overlap, and no write under way (a kill inside one is test_crash's: `rag verify`
    # reports it until repaired)
    count, notes, home, proc = _overlapping_run(tmp_path, also=lambda home: _meta(home, "vectors_dirty") == "0")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    check_left_behind(home, "the overlap")
    chunks, vectored, cached = _counts(home)
    assert 0 < vectored < chunks < count
    code, checked = verify_json(home)
    assert code == 0 and checked["vectors_pending"] == chunks - vectored, checked
    # resumed with the overlap on: only what was not cached is embedded; then all is as a
    # clean build with the phases in turn (the default here)
    report = json.loads(ok(rag("index", notes, "--json", home=home, env=ON)).stdout)
    assert cached + report["embedded"] == _distinct_keys(home) == count, (cached, report)
    code, checked = verify_json(home)
    assert code == 0 and checked["vectors_pending"] == 0, checked
    assert_like_clean_build(notes, home, tmp_path / "clean")
    _assert_same(_rows(home, rowids=False), _rows(tmp_path / "clean", rowids=False))


def test_the_overlap_is_for_an_embedder_on_a_gpu_unless_set(rag_home):
    from ragcli.config import load_config
    from ragcli.embed import make_embedder
    from ragcli.errors import ConfigError
    from ragcli.pipeline.indexing import overlaps

    embedder = make_embedder(load_config())
    try:
        # auto: on where the layers are on a GPU (a lent machine's CUDA build), off on the CPU
        assert overlaps(load_config(), embedder) == (embedder.n_gpu_layers > 0)
        assert overlaps(load_config(env={**ON, "RAG_HOME": str(rag_home)}), embedder)
        assert not overlaps(load_config({"index_overlap": "off"}), embedder)
    finally:
        embedder.close()
    with pytest.raises(ConfigError, match="RAG_INDEX_OVERLAP must be one of auto, on, off"):
        load_config(env={"RAG_INDEX_OVERLAP": "sometimes", "RAG_HOME": str(rag_home)})
