"""Crash safety, for real: `kill -9` at many moments of `rag index`, `rag watch` and
`rag verify --repair`, with notes edited between the kills. Afterwards the next run
completes, `rag verify` passes and the index equals a clean build of the same files
(the manifest's (path, chunk ids) and Chroma's id set).

A kill is sent when the run is seen to reach a stage (it holds the write lock, it has
cached vectors with more to embed, it is rebuilding the vector store), never after a
guessed delay: on any machine every kill lands inside a run, and what each one leaves
behind is checked against the write protocol (``check_left_behind``) before the next.
Edits come from a seeded RNG, so a failure can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import VAULT
from helpers import (chroma_do, chroma_ids, clean_build, index_state, note_text, ok, paragraph, rag, rag_popen,
                     verify_json, wait_for, watching, write_vault)

from ragcli.store import read_holder


def kill_at(proc: subprocess.Popen, stage, what: str) -> None:
    """SIGKILL ``proc`` as soon as ``stage()`` holds, which must happen while it runs."""
    wait_for(stage, f"the run to reach {what}", 300, alive=proc, every=0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def holds_lock(home: Path, proc: subprocess.Popen):
    """Stage: ``proc`` holds the index's write lock (it may write from now on)."""
    return lambda: (read_holder(home / "index" / "write.lock") or {}).get("pid") == proc.pid


def _meta(home: Path, key: str) -> str | None:
    try:
        db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def check_left_behind(home: Path, context: str = "") -> None:
    """What a kill leaves is what the write protocol promises: Chroma holds exactly the
    manifest's chunks that have a cached vector (a vector is cached before Chroma gets it;
    chunks phase one wrote wait for phase two), unless the manifest marks an interrupted
    write, which the next writer finishes."""
    manifest = home / "index" / "manifest.sqlite"
    if not manifest.exists():
        return  # killed before the index was created
    db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=5)
    try:
        ids = {cid for (cid,) in db.execute("SELECT id FROM chunks WHERE vec_key IN (SELECT key FROM vectors)")}
    finally:
        db.close()
    if _meta(home, "vectors_dirty") != "1" and (home / "index" / "chroma").exists():
        assert chroma_ids(home / "index") == ids, context


def edit(notes: Path, rng: random.Random, step: int) -> None:
    """What a user does between two runs: edit, add, delete and rename notes."""
    files = sorted(notes.rglob("*.md"))
    victim = rng.choice(files)
    with victim.open("a", encoding="utf-8") as fh:
        fh.write(f"\n## Edit {step}\n\n{paragraph(rng)}\n")
    (notes / "daily").mkdir(exist_ok=True)
    (notes / "daily" / f"added {step:02d}.md").write_text(note_text(rng, f"Added {step}", sections=2),
                                                        encoding="utf-8")
    if len(files) > 6 and step % 2:
        rng.choice(files).unlink()
    if step % 3 == 0:
        files = sorted(notes.rglob("*.md"))
        src = rng.choice(files)
        src.rename(src.with_name(f"renamed {step:02d}.md"))


def assert_like_clean_build(notes: Path, home: Path, clean_home: Path, context: str = "") -> None:
    ok(rag("index", notes, home=home))
    code, report = verify_json(home)
    assert code == 0, (context, report)
    state, clean = index_state(home), clean_build(notes, clean_home)
    assert state[0] == clean[0], context
    assert state[1] == clean[1] == frozenset().union(*state[0].values()), context
    mine = json.loads(ok(rag("status", "--json", home=home)).stdout)
    theirs = json.loads(ok(rag("status", "--json", home=clean_home)).stdout)
    assert (mine["files"], mine["chunks"]) == (theirs["files"], theirs["chunks"]), context


def test_twenty_kills_at_each_stage_of_rag_index(tmp_path):
    from ragcli.pipeline.indexing import FLUSH_CHUNKS

    seed = 20240611
    rng = random.Random(seed)
    notes = write_vault(tmp_path / "notes", notes=24, seed=seed)
    home = tmp_path / "home"
    for step in range(20):
        if step:
            edit(notes, rng, step)
        # indexed last (paths go in sorted order) and new each time: more than one slice to
        # embed, so a run seen caching vectors still has work to do, however fast the machine
        big_note(notes / "zz long.md", sections=FLUSH_CHUNKS + 40, seed=step)
        args = ["index", notes] + (["--rebuild"] if step in (7, 15) else [])
        proc = rag_popen(*args, home=home)
        context = f"seed {seed}, step {step}"
        if step % 2:
            kill_at(proc, holds_lock(home, proc), "the write lock")
        else:
            before = _cached_vectors(home)
            kill_at(proc, lambda: _cached_vectors(home) > before, "cached vectors of the long note")
        check_left_behind(home, context)
    assert_like_clean_build(notes, home, tmp_path / "clean", f"seed {seed}")


def _cached_vectors(home: Path) -> int:
    try:
        db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def big_note(path: Path, sections: int, seed: int = 3) -> None:
    """One note of many short sections: several FLUSH_CHUNKS batches of cheap-to-embed chunks."""
    rng = random.Random(seed)
    lines = ["# Big note", ""]
    for s in range(sections):
        lines += [f"## Section {s}", "", " ".join(rng.choice(("alpha", "delta", "kappa", "sigma", "omega"))
                                                 for _ in range(12)) + f" number {s}.", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def test_kills_between_the_batches_of_a_big_note_keep_their_progress(tmp_path):
    from ragcli.pipeline.indexing import FLUSH_CHUNKS

    notes = tmp_path / "notes"
    notes.mkdir()
    big_note(notes / "big.md", sections=FLUSH_CHUNKS * 3 + 40)
    home = tmp_path / "home"
    seen = []
    for _ in range(2):  # kill just after a batch of vectors was committed, mid-way through the file
        before = _cached_vectors(home)
        proc = rag_popen("index", notes, home=home)
        kill_at(proc, lambda: _cached_vectors(home) > before, "a committed batch of vectors")
        seen.append(_cached_vectors(home))
        assert seen[-1] > before  # what was embedded before the kill is still there
    assert seen[0] >= FLUSH_CHUNKS and seen[1] >= 2 * FLUSH_CHUNKS, seen
    status = json.loads(ok(rag("status", "--json", home=home)).stdout)
    # phase one wrote the file whole (keyword search finds it); phase two was stopped part-way
    assert status["chunks"] > 0 and 0 < status["vectors_pending"] < status["chunks"], status
    assert status["phase"] == "embedding interrupted"
    assert_like_clean_build(notes, home, tmp_path / "clean")


def test_a_note_half_written_at_the_crash_is_picked_up_next_run(tmp_path):
    from ragcli.pipeline.indexing import FLUSH_CHUNKS

    rng = random.Random(5)
    notes = write_vault(tmp_path / "notes", notes=10, seed=5)
    # a long note, indexed after the one being written (paths are indexed in sorted order): the
    # run is still embedding it when the kill comes, however fast the machine
    big_note(notes / "projects" / "zz long.md", sections=FLUSH_CHUNKS * 4)
    home = tmp_path / "home"
    full = note_text(rng, "Being written", sections=12, paragraphs=3)
    target = notes / "ideas" / "being written.md"
    target.write_text(full[: len(full) // 3], encoding="utf-8")  # cut mid-sentence
    proc = rag_popen("index", notes, home=home)
    # the editor keeps writing while the index runs; the index is killed in the middle
    wait_for(holds_lock(home, proc), "the run to start", 300, alive=proc, every=0.005)
    for cut in (len(full) // 2, 2 * len(full) // 3):
        target.write_text(full[:cut], encoding="utf-8")
    # the kill lands inside the run: once it has committed vectors of the long note, not after it ended
    kill_at(proc, lambda: _cached_vectors(home) > 0, "cached vectors of the long note")
    check_left_behind(home)
    target.write_text(full, encoding="utf-8")
    assert_like_clean_build(notes, home, tmp_path / "clean")


def test_a_change_that_keeps_size_and_mtime_is_caught_by_verify(tmp_path):
    """Stat-based change detection can be fooled (a tool restoring mtime); verify hashes."""
    notes = write_vault(tmp_path / "notes", notes=4, seed=9)
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    target = sorted(notes.rglob("*.md"))[0]
    st = target.stat()
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace("a", "o", 5), encoding="utf-8")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert target.stat().st_size == st.st_size
    ok(rag("index", notes, home=home))  # sees nothing to do
    code, report = verify_json(home)
    assert code == 8 and {"file-changed"} == {p["kind"] for p in report["problems"]}
    code, fixed = verify_json(home, "--repair")
    assert code == 0, fixed
    state, clean = index_state(home), clean_build(notes, tmp_path / "clean")
    assert state == clean


def test_kills_during_verify_repair_rebuild(tmp_path):
    notes = write_vault(tmp_path / "notes", notes=10, seed=11)
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    for step in range(5):
        # damage that verify finds and only a rebuild of the vector store repairs (a small
        # store has no HNSW files on disk yet to spoil)
        chroma_do(home, "col.delete(ids=col.get(limit=3)['ids'])")
        proc = rag_popen("verify", "--repair", home=home)
        if step % 2:
            kill_at(proc, holds_lock(home, proc), "the write lock")
        else:  # the mark stays set from the start of the rebuild to the swap
            kill_at(proc, lambda: _meta(home, "vectors_dirty") == "1", "the vector store's rebuild")
        check_left_behind(home, f"step {step}")
    assert_like_clean_build(notes, home, tmp_path / "clean")


def test_kills_of_rag_watch_while_it_syncs(tmp_path):
    seed = 77
    rng = random.Random(seed)
    notes = write_vault(tmp_path / "notes", notes=10, seed=seed)
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    for step in range(5):
        proc = rag_popen("watch", notes, "--debounce", "0.2", home=home)
        wait_for(lambda: watching(home), "the watcher to start", 120, alive=proc)
        edit(notes, rng, 100 + step)
        # a watcher never ends by itself: a kill after any delay lands, somewhere in its sync
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=rng.uniform(0.2, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        check_left_behind(home, f"seed {seed}, step {step}")
    assert_like_clean_build(notes, home, tmp_path / "clean", f"seed {seed}")


@pytest.mark.skipif(not VAULT.is_dir(), reason="../shared/corpora is not present")
@pytest.mark.slow  # about 6 minutes
def test_acceptance_five_kills_on_the_obsidian_vault(tmp_path):
    import shutil

    notes = tmp_path / "vault"
    shutil.copytree(VAULT, notes)
    home = tmp_path / "home"
    rng = random.Random(1)
    for step in range(5):
        if step:
            edit(notes, rng, step)
        proc = rag_popen("index", notes, home=home)
        with pytest.raises(subprocess.TimeoutExpired):  # a run of the whole vault outlasts the draw
            proc.wait(timeout=rng.uniform(3.0, 25.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        check_left_behind(home, f"step {step}")
    assert_like_clean_build(notes, home, tmp_path / "clean")
