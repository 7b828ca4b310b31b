"""Phase one's chunking workers (``ingest.pool``): the same chunks as cut in process, in the
order asked, failures given as reasons; a worker that dies is reported, and workers do not
outlive a caller killed with SIGKILL. `rag index` with the workers writes the same rows."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT
from ragcli.cli import main
from ragcli.config import load_config
from ragcli.ingest import NoteResolver
from ragcli.ingest.chunk import chunk_document
from ragcli.ingest.pool import ChunkPlan, ChunkPool, PoolBroken
from ragcli.ingest.read import read_and_parse


@pytest.fixture
def vault(tmp_path) -> Path:
    target = tmp_path / "vault"
    shutil.copytree(EXAMPLES / "vault", target)
    return target


def _notes(vault: Path) -> list[Path]:
    return sorted(p for p in vault.rglob("*.md") if ".obsidian" not in p.parts)


@pytest.fixture
def embedder():
    from ragcli.embed import make_embedder

    e = make_embedder(load_config())
    yield e
    e.close()


def test_workers_cut_what_this_process_cuts_in_the_same_order(vault, embedder):
    notes = _notes(vault)
    missing = vault / "gone.md"
    asked = notes[:3] + [missing] + notes[3:]
    resolver = NoteResolver.from_paths({str(p) for p in notes}, [vault])
    plan = ChunkPlan(embedder.token_counter, 120, 20, 1 << 20, resolver.to_dict())
    with ChunkPool(plan, workers=2) as pool:
        got = list(pool.chunked(asked))
    assert [g.path for g in got] == asked
    assert got[3].failure and got[3].failure.startswith("cannot open") and got[3].doc is None
    for note, done in zip(notes, got[:3] + got[4:]):
        doc = read_and_parse(note, 1 << 20, resolver)
        assert done.failure is None
        assert done.chunks == chunk_document(doc, embedder.count_tokens, 120, 20)
        assert (done.doc.title, done.doc.tags, done.doc.embeds, done.doc.sha256) == (
            doc.title, doc.tags, doc.embeds, doc.sha256)
    assert sum(len(d.chunks) for d in got) > len(notes)  # the budget is small: notes are cut


def test_a_worker_that_dies_is_reported(vault, embedder):
    plan = ChunkPlan(embedder.token_counter, 120, 20, 1 << 20)
    notes = _notes(vault) * 10  # more than are asked ahead: the dead child owes answers
    with ChunkPool(plan, workers=2) as pool:
        answers = pool.chunked(notes)
        assert next(answers).failure is None
        pool.children[1].proc.kill()
        with pytest.raises(PoolBroken):
            list(answers)


def test_workers_go_when_their_caller_is_killed(vault, embedder, tmp_path):
    script = (
        "import sys, time\n"
        "from ragcli.ingest.pool import ChunkPlan, ChunkPool\n"
        "pool = ChunkPool(ChunkPlan(len, 120, 20, 1 << 20), workers=2)\n"
        "print(*[c.proc.pid for c in pool.children], flush=True)\n"
        "time.sleep(600)\n")
    caller = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    pids = [int(p) for p in caller.stdout.readline().split()]
    assert len(pids) == 2
    caller.send_signal(signal.SIGKILL)
    caller.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)  # not our child: raises; the check below decides
    except ChildProcessError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; its parent (init) reaps it


def _rows(home: Path) -> list[tuple]:
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    try:
        return sorted(db.execute("SELECT id, path, ordinal, heading, text, line_start, line_end, page, vec_key"
                                 " FROM chunks"))
    finally:
        db.close()


def test_rag_index_with_workers_writes_the_same_rows(vault, rag_home, tmp_path, monkeypatch, capsys):
    from ragcli.pipeline import indexing

    assert main(["index", str(vault)]) == 0
    alone = _rows(rag_home)
    other = tmp_path / "other-home"
    other.mkdir()
    monkeypatch.setenv("RAG_HOME", str(other))
    monkeypatch.setattr(indexing, "POOL_MIN_BYTES", 0)  # the example vault is far below it
    assert main(["index", str(vault)]) == 0
    assert _rows(other) == alone and len(alone) > 13
    capsys.readouterr()
