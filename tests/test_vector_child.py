"""The vector store held by a child process for a one-shot `rag index` (store/vector_child.py):
it answers as the store in process does, its failures come back as one StoreError, it dies
with its writer, and a run whose child is killed or interrupted leaves nothing the next run
cannot finish. Real Chroma folders, real processes, real signals."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from ragcli.errors import ExitCode, StoreError
from ragcli.store.vector_child import ChildStore
from ragcli.store.vectors import ChromaStore

from helpers import ok, rag, rag_popen, wait_for, write_vault
from test_crash import assert_like_clean_build

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _vectors(n: int, seed: int = 1) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _children_of(pid: int) -> list[int]:
    """Pids of the vector-store children of ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid and b"ragcli.store.vector_child" in cmdline:
            found.append(int(entry.name))
    return found


def _child_of(proc):
    """The writer's vector-store child, once it has one (polled fast: a short run ends soon)."""
    return wait_for(lambda: _children_of(proc.pid), "a vector-store child while rag index ran", 120,
                    alive=proc, every=0.02)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_the_child_answers_as_the_store_in_process(tmp_path):
    ids = [f"c{i:03d}" for i in range(60)]
    vectors = _vectors(60)
    paths = [f"/notes/{i % 7}.md" for i in range(60)]
    here, child = ChromaStore.persistent(tmp_path / "here"), ChildStore(tmp_path / "child")
    try:
        for store in (here, child):
            store.upsert(ids, vectors, paths)
            store.delete(ids[:5])
        assert child.count() == here.count() == 55
        assert child.ids() == here.ids() == set(ids[5:])
        for filter_ in (None, ["/notes/3.md"], ["/notes/1.md", "/notes/2.md"], []):
            theirs, mine = here.query(vectors[9], 8, filter_), child.query(vectors[9], 8, filter_)
            assert [i for i, _ in mine] == [i for i, _ in theirs]
            assert np.allclose([s for _, s in mine], [s for _, s in theirs], atol=1e-6)
        pages = list(child.pages(size=7))
        assert [len(p[0]) for p in pages] == [len(p[0]) for p in here.pages(size=7)] == [7] * 7 + [6]
        got = {i: (m["path"], np.asarray(e)) for p in pages for i, m, e in zip(*p)}
        assert all(got[i][0] == paths[int(i[1:])] and np.allclose(got[i][1], vectors[int(i[1:])], atol=1e-6)
                   for i in ids[5:])
        child.reset()
        assert child.count() == 0
    finally:
        child.close()


def test_a_failed_request_is_a_store_error_and_the_child_goes_on(tmp_path):
    child = ChildStore(tmp_path / "child")
    try:
        child.upsert(["a"], _vectors(1), ["/a.md"])
        with pytest.raises(StoreError):
            child.upsert(["b"], np.ones((1, 12), dtype=np.float32), ["/b.md"])  # another dimension
        assert child.count() == 1
    finally:
        child.close()


def test_a_child_that_dies_is_a_store_error_not_a_hang(tmp_path):
    child = ChildStore(tmp_path / "child")
    try:
        assert child.count() == 0
        os.kill(child._proc.pid, signal.SIGKILL)
        with pytest.raises(StoreError, match="the process holding the vector store ended"):
            child.upsert(["a"], _vectors(1), ["/a.md"])
    finally:
        child.close()


def test_ctrl_c_during_a_write_takes_effect_once_the_write_is_done(tmp_path):
    child = ChildStore(tmp_path / "child")
    try:
        assert child.count() == 0
        n = 5000  # a write of a few seconds here
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            child.upsert([f"c{i}" for i in range(n)], _vectors(n), ["/a.md"] * n)
        timer.join()
        assert child.count() == n  # the write finished, and the replies are still in step
        assert child.query(_vectors(n)[7], 1)[0][0] == "c7"
    finally:
        child.close()


def test_a_child_never_asked_anything_is_not_waited_for(tmp_path):
    ChromaStore.persistent(tmp_path / "store").upsert(["a"], _vectors(1), ["/a.md"])
    child = ChildStore(tmp_path / "store")
    child.close()
    assert child._proc.returncode == -signal.SIGKILL
    assert ChromaStore.persistent(tmp_path / "store").count() == 1


@linux_only
def test_the_child_dies_with_its_writer_and_the_next_run_finishes(tmp_path):
    notes = write_vault(tmp_path / "notes", notes=40, seed=5)
    home = tmp_path / "home"
    proc = rag_popen("index", notes, home=home)
    children = _child_of(proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    wait_for(lambda: not any(map(_alive, children)), "the child to end with its writer", 60)
    assert_like_clean_build(notes, home, tmp_path / "clean")


@linux_only
def test_a_killed_child_fails_the_run_with_one_line_and_loses_nothing(tmp_path):
    notes = write_vault(tmp_path / "notes", notes=40, seed=6)
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    for note in sorted(notes.rglob("*.md"))[:20]:
        with note.open("a", encoding="utf-8") as fh:
            fh.write("\n\n## Later\n\nA paragraph added after the first run, about lanterns.\n")
    proc = rag_popen("index", home=home)
    children = _child_of(proc)
    os.kill(children[0], signal.SIGKILL)
    proc.wait(timeout=600)
    err = proc.stderr.read().decode()
    assert proc.returncode == ExitCode.STORE, (proc.returncode, err)
    assert "the process holding the vector store ended" in err and "Traceback" not in err, err
    assert_like_clean_build(notes, home, tmp_path / "clean")


@linux_only
def test_ctrl_c_reaches_the_writer_not_its_child(tmp_path):
    notes = write_vault(tmp_path / "notes", notes=40, seed=7)
    home = tmp_path / "home"
    proc = rag_popen("index", notes, home=home, start_new_session=True)
    children = _child_of(proc)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    proc.wait(timeout=600)
    err = proc.stderr.read().decode()
    assert proc.returncode == ExitCode.INTERRUPTED, (proc.returncode, err)
    assert "Traceback" not in err and "process holding the vector store" not in err, err
    assert not any(map(_alive, children))
    assert_like_clean_build(notes, home, tmp_path / "clean")
