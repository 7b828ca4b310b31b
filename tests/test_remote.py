"""The index on a real Chroma server (`chroma run` on 127.0.0.1), driven through the CLI.

The manifest stays on this machine and is the truth; the server holds one collection per
index (named in the manifest). Checked here, each for real: index, search, verify, and
`verify --repair` after the collection was damaged behind the index's back (ids deleted,
strays added, a vector changed, through chromadb.HttpClient); a collection the server lost
is filled again from the vector cache with no re-embedding; two indexes in the same folder
path (two laptops) never share a collection; `rag watch` follows an edit and rides out a
server outage; `kill -9` during
`rag index` is recovered; a server that dies mid-index, or is down, gives one `Error:` line
and exit code 6, and the next run after it comes back puts everything in step.
"""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
from pathlib import Path

import numpy as np
import pytest

from helpers import note_text, ok, paragraph, rag, rag_popen, verify_json, wait_for, watching, write_vault
from servers import DEADLINE, chroma_cli, chroma_server

pytestmark = pytest.mark.skipif(chroma_cli() is None, reason="the chroma CLI is not installed")

STORE_EXIT = 6


@pytest.fixture(scope="module")
def chroma(tmp_path_factory):
    """One Chroma server for the module (each test's index gets its own collection)."""
    base = tmp_path_factory.mktemp("chroma-server")
    server = chroma_server(base / "data", base / "chroma.log").start()
    yield server
    server.stop()


@pytest.fixture
def on_server(chroma, monkeypatch):
    """Point this test's `rag` runs (child processes inherit the environment) at the server."""
    monkeypatch.setenv("RAG_CHROMA_URL", chroma.url)
    return chroma


# ---------------------------------------------------------------------------- helpers


def client(server):
    import chromadb
    from chromadb.config import Settings

    return chromadb.HttpClient(host="127.0.0.1", port=server.port, settings=Settings(anonymized_telemetry=False))


def collection_name(home: Path) -> str:
    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'chroma_collection'").fetchone()
        return row[0] if row else ""
    finally:
        db.close()


def manifest_chunks(home: Path) -> dict[str, str]:
    """chunk id -> path, from the manifest."""
    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT id, path FROM chunks"))
    finally:
        db.close()


def server_chunks(server, home: Path) -> dict[str, str]:
    """chunk id -> path, from the index's collection on the server."""
    col = client(server).get_collection(collection_name(home))
    got = col.get(include=["metadatas"])
    return {cid: (meta or {}).get("path", "") for cid, meta in zip(got["ids"], got["metadatas"])}


def assert_in_step(server, home: Path) -> None:
    code, report = verify_json(home)
    assert code == 0 and report["ok"], report
    chunks = manifest_chunks(home)
    assert chunks and server_chunks(server, home) == chunks
    assert report["vectors"] == len(chunks)


def vector_search(home: Path, query: str, k: int = 3) -> list[dict]:
    proc = ok(rag("search", query, "--mode", "vector", "-k", str(k), "--json", home=home))
    return json.loads(proc.stdout)["results"]


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.decode(errors="replace").splitlines() if line.startswith("Error:")]


def assert_store_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 6 with one `Error:` line and a hint, no traceback; returns stderr."""
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == STORE_EXIT, (proc.returncode, err[-3000:])
    assert len(error_lines(proc)) == 1, err[-3000:]
    assert "Hint:" in err and "Traceback" not in err, err[-3000:]
    for word in words:
        assert word in err, (word, err[-3000:])
    return err


SOURDOUGH = ("# Sourdough\n\nFeed the starter the night before, autolyse the flour, fold the dough four "
             "times an hour apart and proof it overnight in the fridge. Marker: farinose.\n")
BEES = ("# Beekeeping\n\nInspect the brood frames every nine days in swarm season and keep the hive "
        "in a dry spot sheltered from the wind. Marker: apiarist.\n")


# ---------------------------------------------------------------------------- tests


def test_index_search_verify_and_repair_through_the_server(on_server, tmp_path):
    notes = write_vault(tmp_path / "notes", notes=6)
    (notes / "Kitchen.md").write_text(SOURDOUGH, encoding="utf-8")
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    assert not (home / "index" / "chroma").exists()  # the vectors are on the server, not on disk
    assert collection_name(home).startswith("ragcli-")
    assert_in_step(on_server, home)

    hits = vector_search(home, "how do I feed a sourdough starter and proof the dough overnight")
    assert hits[0]["path"] == str(notes / "Kitchen.md") and "farinose" in hits[0]["text"]
    status = json.loads(ok(rag("status", "--json", home=home)).stdout)
    assert status["chroma_server"] == {"url": on_server.url, "collection": collection_name(home)}

    # Damage the collection behind the index's back: ids deleted, strays added, a vector changed.
    col = client(on_server).get_collection(collection_name(home))
    ids = sorted(manifest_chunks(home))
    col.delete(ids=ids[:3])
    rng = np.random.default_rng(0)
    col.upsert(ids=["stray-1", "stray-2"], embeddings=rng.normal(size=(2, 384)).astype(np.float32),
               metadatas=[{"path": str(notes / "gone.md")}] * 2)
    col.update(ids=[ids[5]], embeddings=rng.normal(size=(1, 384)).astype(np.float32))
    code, report = verify_json(home)
    assert code == 8, report
    kinds = {p["kind"] for p in report["problems"]}
    assert {"vectors-missing", "vectors-extra", "vector-stale"} <= kinds, kinds
    code, fixed = verify_json(home, "--repair")
    assert code == 0 and fixed["ok"], fixed
    assert any(collection_name(home) in action and "vector cache" in action for action in fixed["repaired"])
    assert_in_step(on_server, home)

    # An edit reaches the server: the new chunks in, the old ones out.
    (notes / "Kitchen.md").write_text(BEES, encoding="utf-8")
    ok(rag("index", home=home))
    assert_in_step(on_server, home)
    hits = vector_search(home, "inspect the brood frames of the hive in swarm season")
    assert hits[0]["path"] == str(notes / "Kitchen.md") and "apiarist" in hits[0]["text"]
    assert not any("farinose" in h["text"] for h in vector_search(home, "sourdough starter", k=10))


def test_a_collection_the_server_lost_is_filled_from_the_cache(on_server, tmp_path):
    notes = write_vault(tmp_path / "notes", notes=4)
    (notes / "Kitchen.md").write_text(SOURDOUGH, encoding="utf-8")
    home = tmp_path / "home"
    ok(rag("index", notes, home=home))
    client(on_server).delete_collection(collection_name(home))  # the server's data is gone

    # A reader may not write: it says what to run instead of searching an empty collection.
    assert_store_error(rag("search", "sourdough", "--mode", "vector", home=home), "rag index")
    # A writer fills the collection from the manifest's vector cache: nothing is embedded again.
    report = json.loads(ok(rag("index", "--json", home=home)).stdout)
    assert report["embedded"] == 0 and report["files_indexed"] == 0
    assert_in_step(on_server, home)
    assert vector_search(home, "feed the sourdough starter")[0]["path"] == str(notes / "Kitchen.md")


def test_two_laptops_with_the_same_index_path_keep_their_own_collections(on_server, tmp_path):
    """Same user name, same default folders: the index path is the same on both laptops."""
    home = tmp_path / "home"
    notes_a = write_vault(tmp_path / "a", notes=3, seed=1)
    (notes_a / "Kitchen.md").write_text(SOURDOUGH, encoding="utf-8")
    notes_b = write_vault(tmp_path / "b", notes=3, seed=2)
    (notes_b / "Garden.md").write_text(BEES, encoding="utf-8")

    ok(rag("index", notes_a, home=home))
    laptop_a = collection_name(home)
    home.rename(tmp_path / "laptop-a")
    ok(rag("index", notes_b, home=home))
    laptop_b = collection_name(home)
    assert laptop_a != laptop_b
    assert_in_step(on_server, home)
    assert vector_search(home, "feed the sourdough starter", k=10)[0]["path"].startswith(str(notes_b))

    home.rename(tmp_path / "laptop-b")
    (tmp_path / "laptop-a").rename(home)
    assert_in_step(on_server, home)  # laptop B's run left laptop A's collection alone
    hits = vector_search(home, "inspect the brood frames of the hive", k=10)
    assert hits and all(h["path"].startswith(str(notes_a)) for h in hits)


def test_watch_follows_an_edit_through_the_server(on_server, tmp_path):
    notes = write_vault(tmp_path / "notes", notes=4)
    home = tmp_path / "home"
    home.mkdir()
    log = open(tmp_path / "watch.log", "wb")
    daemon = rag_popen("watch", notes, "--debounce", "0.3", home=home, stderr=log)
    try:
        wait_for(lambda: watching(home), "the watcher to start", DEADLINE, alive=daemon, log=tmp_path / "watch.log")
        target = sorted(notes.rglob("*.md"))[0]
        target.write_text(BEES, encoding="utf-8")
        wait_for(lambda: _finds(home, target, "inspect the brood frames of the hive in swarm season", "apiarist"),
                 "the edit to reach the server", DEADLINE, alive=daemon, log=tmp_path / "watch.log")
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0, (tmp_path / "watch.log").read_text()
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        log.close()
    assert_in_step(on_server, home)


def test_watch_rides_out_a_server_outage(tmp_path, monkeypatch):
    """The server stops while the watcher runs: a sync fails half-way (the manifest marked,
    the server unreachable), the watcher logs it and goes on, and once the server is back
    its retry recovers the marked write first and indexes the edit."""
    server = chroma_server(tmp_path / "data", tmp_path / "chroma.log").start()
    monkeypatch.setenv("RAG_CHROMA_URL", server.url)
    notes = write_vault(tmp_path / "notes", notes=3)
    home = tmp_path / "home"
    home.mkdir()
    log_path = tmp_path / "watch.log"
    log = open(log_path, "wb")
    daemon = rag_popen("watch", notes, "--debounce", "0.3", "--reconcile-interval", "20", home=home, stderr=log)
    try:
        wait_for(lambda: watching(home), "the watcher to start", DEADLINE, alive=daemon, log=log_path)
        server.stop()
        target = sorted(notes.rglob("*.md"))[0]
        target.write_text(BEES, encoding="utf-8")
        wait_for(lambda: "Chroma server" in log_path.read_text(errors="replace"), "the watcher to log the failed sync",
                 DEADLINE, alive=daemon, log=log_path)
        server.start()
        wait_for(lambda: _finds(home, target, "inspect the brood frames of the hive in swarm season", "apiarist"),
                 "the edit to reach the server once it is back", DEADLINE, alive=daemon, log=log_path)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0, log_path.read_text(errors="replace")[-3000:]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        log.close()
    try:
        assert_in_step(server, home)
    finally:
        server.stop()


def _finds(home: Path, path: Path, query: str, marker: str) -> bool:
    """A vector search's top hit is ``path`` *with its new text* (an old chunk of the same
    note may be nearest by chance before the edit is indexed)."""
    proc = rag("search", query, "--mode", "vector", "-k", "1", "--json", home=home)
    hits = json.loads(proc.stdout)["results"] if proc.returncode == 0 else []
    return bool(hits) and hits[0]["path"] == str(path) and marker in hits[0]["text"]


def test_kill_9_during_index_is_recovered_on_the_server(on_server, tmp_path):
    rng = random.Random(11)
    notes = write_vault(tmp_path / "notes", notes=60, seed=3)
    home = tmp_path / "home"
    home.mkdir()
    # The first kill waits for this run's first vectors on the server, so it lands mid-index
    # however fast the machine; the later ones come at random moments and may miss.
    proc = rag_popen("index", notes, home=home)
    wait_for(lambda: _server_count(on_server, home) > 0, "the first vectors on the server", DEADLINE, alive=proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    for step in range(3):
        victim = rng.choice(sorted(notes.rglob("*.md")))  # edits between the runs
        with victim.open("a", encoding="utf-8") as fh:
            fh.write(f"\n## Edit {step}\n\n{paragraph(rng)}\n")
        (notes / f"added {step}.md").write_text(note_text(rng, f"Added {step}"), encoding="utf-8")
        proc = rag_popen("index", notes, home=home)
        try:
            proc.wait(timeout=0.5 + 3 * rng.random())
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        else:
            assert proc.returncode == 0, proc.stderr.read()[-3000:]
        proc.stderr.close()
    ok(rag("index", notes, home=home))
    assert_in_step(on_server, home)


def test_a_server_that_dies_or_is_down_is_one_error_and_the_next_run_catches_up(tmp_path, monkeypatch):
    server = chroma_server(tmp_path / "data", tmp_path / "chroma.log").start()
    try:
        monkeypatch.setenv("RAG_CHROMA_URL", server.url)
        notes = tmp_path / "notes"
        home = tmp_path / "home"
        home.mkdir()
        # The server dies in the middle of a run. A machine fast enough to finish the run
        # before the kill lands (a lent GPU indexed the 60 notes first) gets a bigger run.
        for attempt, count in enumerate((60, 600, 3000)):
            write_vault(notes / f"batch {attempt}", notes=count, seed=5 + attempt)
            before = _server_count(server, home) if attempt else 0
            proc = rag_popen("index", notes, home=home)
            wait_for(lambda: _server_count(server, home) > before, "the run's first vectors on the server",
                     DEADLINE, alive=proc)
            if proc.poll() is None:
                break
            ok(subprocess.CompletedProcess(proc.args, proc.returncode, *proc.communicate()))
        else:
            pytest.fail("every run ended before the server could be killed in its middle")
        server.stop(kill=True)
        _out, err = proc.communicate(timeout=600)
        assert_store_error(subprocess.CompletedProcess(proc.args, proc.returncode, b"", err),
                           server.url, "chroma run")

        # While it is down: every command that needs it says so the same way; status does not.
        assert_store_error(rag("search", "river", home=home), server.url)
        assert_store_error(rag("verify", home=home), server.url)
        assert_store_error(rag("index", home=home), server.url)
        status = ok(rag("status", home=home))
        assert server.url.encode() in status.stdout

        server.start()  # it comes back, same data folder and port
        ok(rag("index", home=home))
        assert_in_step(server, home)
    finally:
        server.stop()


def _server_count(server, home: Path) -> int:
    if not (home / "index" / "manifest.sqlite").exists():
        return 0
    try:
        name = collection_name(home)
        return client(server).get_collection(name).count() if name else 0
    except Exception:  # noqa: BLE001 - the collection is not created yet, or the manifest is busy
        return 0
