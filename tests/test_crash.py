"""Crash safety, for real: `kill -9` at many moments of `rag index`, `rag watch` and
`rag verify --repair`, with notes edited between the kills. Afterwards the next run
completes, `rag verify` passes and the index equals a clean build of the same files
(the manifest's (path, chunk ids) and Chroma's id set).

Kill moments come from a seeded RNG, so a failure can be replayed (the seed is in the
assertion message).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import VAULT
from helpers import (clean_build, index_state, note_text, ok, paragraph, rag, rag_popen, verify_json,
                     write_vault)


def kill_after(proc: subprocess.Popen, delay: float) -> bool:
    """SIGKILL ``proc`` after ``delay`` seconds; True if it was still running (a real kill)."""
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True
    err = proc.stderr.read() if proc.stderr else b""
    assert proc.returncode == 0 and b"Traceback" not in err, (proc.returncode, err[-3000:])
    return False


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


def test_twenty_kills_at_random_moments_of_rag_index(tmp_path):
    seed = 20240611
    rng = random.Random(seed)
    notes = write_vault(tmp_path / "notes", notes=24, seed=seed)
    home = tmp_path / "home"
    kills, moments, window = 0, [], 9.0
    for step in range(60):  # until 20 kills landed inside a run
        if kills == 20:
            break
        if step:
            edit(notes, rng, step)
        args = ["index", notes] + (["--rebuild"] if step in (7, 15) else [])
        delay = rng.uniform(0.3, window)
        started = time.monotonic()
        killed = kill_after(rag_popen(*args, home=home), delay)
        if not killed:  # the run was shorter than the moment drawn: draw within its length next
            window = max(1.0, time.monotonic() - started)
        kills += killed
        moments.append(round(delay, 2) if killed else None)
    assert kills == 20, moments
    assert_like_clean_build(notes, home, tmp_path / "clean", f"seed {seed}, kills at {moments}")


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
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            if _cached_vectors(home) > before:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before a batch was seen"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen.append(_cached_vectors(home))
        assert seen[-1] > before  # what was embedded before the kill is still there
    assert seen[0] >= FLUSH_CHUNKS and seen[1] >= 2 * FLUSH_CHUNKS, seen
    status = json.loads(ok(rag("status", "--json", home=home)).stdout)
    assert status["chunks"] == 0  # the file itself is written whole or not at all
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
    for cut in (len(full) // 2, 2 * len(full) // 3):
        time.sleep(0.5)
        target.write_text(full[:cut], encoding="utf-8")
    # the kill lands inside the run: once it has committed vectors of the long note, not after it ended
    _wait_for(lambda: proc.poll() is not None or _cached_vectors(home) > 0, 300)
    assert proc.poll() is None, ("the run ended before the kill", proc.returncode, proc.stderr.read()[-3000:])
    proc.send_signal(signal.SIGKILL)
    proc.wait()
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
    rng = random.Random(11)
    kills, window = 0, 6.0
    for _ in range(20):  # until 5 kills landed inside a repair
        if kills == 5:
            break
        for path in (home / "index" / "chroma").rglob("*.bin"):  # damage: the rebuild has work
            path.write_bytes(b"\0" * 16)
        started = time.monotonic()
        killed = kill_after(rag_popen("verify", "--repair", home=home), rng.uniform(0.3, window))
        if not killed:
            window = max(0.5, time.monotonic() - started)
        kills += killed
    assert kills == 5
    assert_like_clean_build(notes, home, tmp_path / "clean")


def _wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_kills_of_rag_watch_while_it_syncs(tmp_path):
    seed = 77
    rng = random.Random(seed)
    notes = write_vault(tmp_path / "notes", notes=10, seed=seed)
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    kills = 0
    for step in range(5):
        proc = rag_popen("watch", notes, "--debounce", "0.2", home=home)
        assert _wait_for(lambda: (home / "index" / "watch.json").exists(), 60), "the watcher did not start"
        time.sleep(1.0)
        edit(notes, rng, 100 + step)
        kills += kill_after(proc, rng.uniform(0.5, 5.0))
    assert kills == 5
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
        assert kill_after(rag_popen("index", notes, home=home), rng.uniform(3.0, 25.0))
    assert_like_clean_build(notes, home, tmp_path / "clean")
