"""`rag watch --detach/--stop/--status` and the warm socket: real processes, real files.

The watcher is started the way a user starts it (`rag watch --detach` in a child process
that then exits), talked to through the real CLI (`rag search`, `rag ask`, `rag status`)
and through a raw Unix socket, and stopped with `rag watch --stop` or `kill -9`.
``RAG_DAEMON=require`` makes the CLI fail (exit 11) instead of falling back, so a result
obtained with it went through the socket; ``RAG_DAEMON=off`` makes it work in process.
Only generous deadlines, no timing asserts.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from helpers import ok, rag_env, wait_for, write_notes
from helpers import rag as _rag

ROOT = Path(__file__).resolve().parents[1]
rag = partial(_rag, text=True)  # this file reads str output
DEADLINE = 180.0  # seconds for a state to show up (a loaded 2-core machine loading models)

NOTES = {
    "Garden/Tomatoes.md": "# Tomatoes\n\nTomatoes want full sun, deep watering and a stake. "
                          "Pinch the suckers. Marker: quillwort.\n",
    "Kitchen/Bread.md": "---\ntags: [baking]\n---\n# Sourdough bread\n\nFeed the starter, autolyse the "
                        "flour, fold four times, proof overnight in the fridge. Marker: farinose.\n",
    "Kitchen/Soup.md": "# Lentil soup\n\nSweat onions and carrots, add red lentils and cumin, simmer "
                       "twenty minutes. Marker: pottage.\n",
    "Travel.md": "# Train travel\n\nNight trains across the Alps; book couchettes early. Marker: wagonlit.\n",
}


# ---------------------------------------------------------------- helpers


def live_status() -> dict | None:
    """The watcher's own status over its socket (this process's RAG_HOME), or None."""
    from ragcli.config import load_config
    from ragcli.serve.client import daemon_status

    return daemon_status(load_config(), timeout=5.0)


def alive(pid: int) -> bool:
    from ragcli.watch.background import _alive

    return _alive(pid)


@pytest.fixture
def vault(tmp_path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


@pytest.fixture
def index_dir(rag_home) -> Path:
    """The index folder; whatever watcher a test leaves running is killed at the end."""
    folder = rag_home / "index"
    yield folder
    from ragcli.store import read_holder

    holder = read_holder(folder / "write.lock")
    if holder and holder.get("pid"):
        try:
            os.kill(int(holder["pid"]), signal.SIGKILL)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 30
        while alive(int(holder["pid"])) and time.monotonic() < deadline:
            time.sleep(0.1)


def detach(*args: str) -> int:
    """`rag watch --detach ARGS`; waits until it answers search; returns the watcher's pid."""
    started = ok(rag("watch", "--detach", "--json", *args))
    pid = json.loads(started.stdout)["pid"]
    wait_for(lambda: (live_status() or {}).get("serving") == "ready", "the watcher to answer")
    return pid


def search_json(query: str, *args: str, **env) -> dict:
    """A search's JSON. One the watcher must answer (``RAG_DAEMON=require``) is asked again while
    it says "busy": its own work between syncs (loading the models, embedding passages ahead of
    questions) holds the models a step at a time, and on a loaded machine a step can outlast the
    two seconds a request waits for them (``serve.server.BUSY_WAIT``; ``auto`` then answers in
    process). The outcome is checked, not how soon it comes."""
    def answered():
        proc = rag("search", "--json", query, *args, env=env)
        if env.get("RAG_DAEMON") == "require" and proc.returncode == 11 and "busy" in proc.stderr:
            return None
        return ok(proc)
    return json.loads(wait_for(answered, f"the watcher to answer {query!r}", timeout=300, every=1.0).stdout)


# ---------------------------------------------------------------- no watcher needed


def test_client_imports_stay_light():
    code = ("import ragcli.cli, ragcli.serve.client, sys; "
            "print([m for m in ('numpy', 'chromadb', 'llama_cpp', 'watchdog', 'ragcli.store') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rag_env(), check=True)
    assert out.stdout.strip() == "[]"


def test_request_checks():
    from ragcli.serve.protocol import BadRequest, parse_request

    good = parse_request(b'{"op": "search", "settings": "s", "query": "q", "k": 3, "filters": {"tag": "x"}}')
    assert good["k"] == 3 and good["filters"] == {"path": None, "tag": "x", "since": None, "until": None}
    assert parse_request(b'{"op": "status", "anything": 1}') == {"op": "status"}
    bad = [b"", b"\xff", b"[]", b"null", b'"op"', b'{"op": "shell", "cmd": "id"}', b'{"op": ["search"]}',
           b'{"op": "search", "query": "q"}', b'{"op": "search", "settings": "s", "query": 3}',
           b'{"op": "search", "settings": "s", "query": "q", "k": "3"}',
           b'{"op": "search", "settings": "s", "query": "q", "k": true}',
           b'{"op": "search", "settings": "s", "query": "q", "k": 2.5}',
           b'{"op": "search", "settings": "s", "query": "q", "k": 1e300}',
           b'{"op": "search", "settings": "s", "query": "q", "mode": "sql"}',
           b'{"op": "search", "settings": "s", "query": "q", "filters": {"where": "1=1"}}',
           b'{"op": "search", "settings": "s", "query": "q", "filters": ["tag"]}',
           b'{"op": "ask", "settings": "s", "question": "q", "temperature": NaN}',
           b'{"op": "ask", "settings": "s", "question": "q", "max_tokens": Infinity}',
           b'{"op": "ask", "settings": "s", "question": {"a": 1}}',
           b'{"op": "ask", "settings": "s", "question": "q", "quotes_only": "yes"}',
           b"[" * 100_000]
    for line in bad:
        with pytest.raises(BadRequest):
            parse_request(line)


def test_stop_and_status_with_no_watcher(rag_home):
    assert "No watcher is running" in ok(rag("watch", "--stop")).stderr
    assert json.loads(ok(rag("watch", "--status", "--json")).stdout) == {"schema": 1, "running": False}
    # `rag watch stop` names a folder "stop": refused, with what was probably meant.
    wrong = rag("watch", "stop")
    assert wrong.returncode == 2 and "rag watch --stop" in wrong.stderr
    assert rag("watch", "--stop", "--status").returncode == 2
    # With no watcher, `require` fails plainly (exit 11) and `auto` works in process.
    assert rag("search", "anything", env={"RAG_DAEMON": "require"}).returncode == 11


# ---------------------------------------------------------------- a detached watcher


def test_detach_survives_the_terminal_then_stop(vault, index_dir, rag_home, tmp_path):
    # Started from a shell in its own session, as from a terminal; the launcher exits, then
    # the whole process group of that "terminal" gets SIGHUP, as when the window closes.
    rc_file = tmp_path / "launcher.rc"
    script = (f'"{sys.executable}" -m ragcli.cli watch --detach --debounce 0.3 "{vault}" '
              f'> "{tmp_path}/launcher.out" 2>&1; echo $? > "{rc_file}"; exec sleep 600')
    # A terminal's shell starts with SIGHUP at its default; under nohup it would be ignored and
    # inherited (a shell cannot un-ignore it), and the "window closing" would close nothing.
    terminal = subprocess.Popen(["sh", "-c", script], env=rag_env(), cwd=ROOT, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    try:
        wait_for(lambda: rc_file.exists() and rc_file.read_text().strip(), "the launcher to return")
        assert rc_file.read_text().strip() == "0", (tmp_path / "launcher.out").read_text()
        pid = int((index_dir / "watch.pid").read_text())
        assert f"pid {pid}" in (tmp_path / "launcher.out").read_text()
        assert os.getsid(pid) == pid and os.getpgid(pid) != os.getpgid(terminal.pid)
        os.killpg(terminal.pid, signal.SIGHUP)
        terminal.wait(timeout=30)
    finally:
        if terminal.poll() is None:
            os.killpg(terminal.pid, signal.SIGKILL)
            terminal.wait()
    # It answers after its terminal hung up: it outlived the hangup.
    wait_for(lambda: (live_status() or {}).get("serving") == "ready", "the watcher to answer")
    assert alive(pid)

    # Its files: pid file, socket and log, owner-only.
    for name in ("watch.pid", "watch.log", "watch.out", "watch.sock", "watch.json"):
        assert stat.S_IMODE((index_dir / name).stat().st_mode) == 0o600, name
    assert stat.S_ISSOCK((index_dir / "watch.sock").stat().st_mode)

    # `rag watch --status` and `rag status` show it.
    st = json.loads(ok(rag("watch", "--status", "--json")).stdout)
    assert st["running"] and st["pid"] == pid and st["answering"]
    assert st["socket"] == str(index_dir / "watch.sock") and st["log"] == str(index_dir / "watch.log")
    assert st["roots"] == [str(vault)] and st["since"] <= time.time()
    status = json.loads(ok(rag("status", "--json")).stdout)
    assert status["watcher"]["pid"] == pid and status["watcher"]["socket"] == st["socket"]
    text = ok(rag("status")).stdout
    assert f"Watcher:    pid {pid}" in text and str(index_dir / "watch.log") in text

    # A second one is refused naming the first (exit 7), detached or not.
    second = rag("watch", "--detach", str(vault))
    assert second.returncode == 7 and f"pid {pid}" in second.stderr and "rag watch --stop" in second.stderr
    foreground = rag("watch", str(vault), timeout=60)
    assert foreground.returncode == 7 and f"pid {pid}" in foreground.stderr

    # Searched through the socket; nothing of the query or the notes reaches the log at INFO.
    assert search_json("zeppelin quillwort", RAG_DAEMON="require")["results"]

    stopped = ok(rag("watch", "--stop", "--json", timeout=120))
    assert json.loads(stopped.stdout)["stopped"] == pid and json.loads(stopped.stdout)["code"] == 0
    assert not alive(pid)
    assert not (index_dir / "watch.pid").exists() and not (index_dir / "watch.sock").exists()
    assert json.loads((index_dir / "watch.exit").read_text())["code"] == 0
    assert json.loads(ok(rag("watch", "--status", "--json")).stdout)["running"] is False
    log = (index_dir / "watch.log").read_text()
    assert "stopped; the index lock is released" in log
    for secret in ("zeppelin", "quillwort", "Tomatoes want"):
        assert secret not in log
    ok(rag("verify"))
    assert "No watcher is running" in ok(rag("watch", "--stop")).stderr


def test_edits_are_found_through_the_socket_with_in_process_results(vault, index_dir, rag_home):
    ok(rag("index", str(vault)))
    pid = detach("--debounce", "0.3")

    # An edit while detached: found by `rag search` through the socket (require: no fallback).
    (vault / "Kitchen/Bread.md").write_text("# Rye bread\n\nA dense rye with caraway, baked in a "
                                            "pullman tin. Marker: pumpernickel.\n")
    (vault / "Bees.md").write_text("# Bees\n\nInspect the brood frames every nine days in swarm season. "
                                   "Marker: apiarist.\n")
    # Waits for the new text itself: any hybrid search lists Bread.md (4 notes), edited or not,
    # and a client that answers in 0.15 s asks again before the watcher has re-indexed.
    def indexed(word: str, note: str) -> bool:
        return any(h["path"] == str(vault / note) and word in h["text"]
                   for h in search_json(word, "--mode", "keyword", RAG_DAEMON="require")["results"])

    wait_for(lambda: indexed("pumpernickel", "Kitchen/Bread.md") and indexed("apiarist", "Bees.md"),
             "the edits, through the socket", log=index_dir / "watch.log")
    assert search_json("farinose", "--mode", "keyword", RAG_DAEMON="require")["results"] == []
    # Keyword search finds a note at the end of a sync's phase one; its vector comes in phase two,
    # which the watcher may still be running while it answers: waits for the vector, too.
    def vector_top() -> bool:
        top = search_json("inspect brood frames in swarm season", "--mode", "vector", "-k", "1",
                          RAG_DAEMON="require")
        return top["results"][0]["path"] == str(vault / "Bees.md")

    wait_for(vector_top, "the edit's vector, through the socket", log=index_dir / "watch.log")

    # The same results either way, every mode, with filters.
    for args in (["caraway rye"], ["night trains", "--mode", "vector"], ["lentils", "--mode", "keyword"],
                 ["bread", "--tag", "baking"], ["sun", "--path", "*/Garden/*", "-k", "3"]):
        warm = search_json(*args, RAG_DAEMON="require")
        cold = search_json(*args, RAG_DAEMON="off")
        assert warm == cold, args
    before = live_status()["requests"]
    search_json("caraway")
    assert live_status()["requests"] == before + 1  # auto went through the socket too

    # Other settings than the watcher's: `auto` answers in process, `require` says why not.
    other = rag("search", "--json", "caraway",
                env={"RAG_DAEMON": "require", "RAG_TOP_K": "4", "RAG_CHUNK_TOKENS": "120"})
    assert other.returncode == 11 and "settings" in other.stderr
    assert search_json("caraway", RAG_CHUNK_TOKENS="120") == search_json("caraway", RAG_DAEMON="off")

    # ask: streamed through the socket, the same answer as in process.
    from ragcli.config import load_config
    from ragcli.serve.client import daemon_answer

    config = load_config({"max_tokens": 48})
    pieces: list[str] = []
    answer = daemon_answer(config, "How is the rye bread baked?", on_token=pieces.append)
    assert answer is not None and answer.covered and answer.quotes
    assert "".join(pieces).strip() == answer.text  # streamed a checked sentence at a time (if one adds)
    warm = json.loads(ok(rag("ask", "--json", "--max-tokens", "48", "How is the rye bread baked?",
                             env={"RAG_DAEMON": "require"})).stdout)
    cold = json.loads(ok(rag("ask", "--json", "--max-tokens", "48", "How is the rye bread baked?",
                             env={"RAG_DAEMON": "off"})).stdout)
    warm.pop("timings"), cold.pop("timings")
    assert warm == cold
    assert warm["answer"] == answer.text and any(s["path"].endswith("Bread.md") for s in warm["sources"])

    assert json.loads(ok(rag("watch", "--stop", "--json", timeout=120)).stdout)["stopped"] == pid
    assert "pumpernickel" not in (index_dir / "watch.log").read_text()


def test_kill_9_mid_write_falls_back_and_the_next_start_recovers(tmp_path, index_dir, rag_home):
    import random

    rng = random.Random(5)
    words = [w for w in (ROOT / "README.md").read_text().lower().split() if w.isalpha()]
    vault = tmp_path / "big"
    vault.mkdir()
    for i in range(24):
        paragraphs = [f"# Note {i}"] + [" ".join(rng.choice(words) for _ in range(120)) for _ in range(10)]
        (vault / f"n{i:02d}.md").write_text("\n\n".join(paragraphs) + "\n")
    started = ok(rag("watch", "--detach", "--json", "--verbose", str(vault)))
    pid = json.loads(started.stdout)["pid"]
    log = index_dir / "watch.log"
    # Killed while a batch is being written (the manifest marks the vector store dirty until
    # the batch commits), or, if this machine never lets us see that moment, after a note.
    writing = _wait_for_a_write(index_dir / "manifest.sqlite", timeout=600)
    if not writing:
        wait_for(lambda: log.exists() and "indexed " + str(vault) in log.read_text(), "a note", log=log)
    os.kill(pid, signal.SIGKILL)
    print(f"killed {'in the middle of a batch write' if writing else 'between writes'}")
    wait_for(lambda: not alive(pid), "the watcher to die")

    # A stale socket file is left behind: the CLI answers in process at once.
    assert (index_dir / "watch.sock").exists()
    assert rag("search", "--json", "note", timeout=60, env={"RAG_DAEMON": "require"}).returncode == 11
    fallback = ok(rag("search", "--json", "note", timeout=300))
    assert "results" in json.loads(fallback.stdout)
    assert json.loads(ok(rag("watch", "--status", "--json")).stdout)["running"] is False

    # The next start recovers whatever the kill cut, finishes indexing, and stops clean.
    pid2 = detach()
    assert pid2 != pid
    wait_for(lambda: (live_status() or {}).get("state") == "watching" and live_status().get("syncs", 0) >= 1,
             "the start-up reconcile", timeout=600, log=log)
    assert json.loads(ok(rag("status", "--json")).stdout)["files"] == 24
    assert search_json("note", RAG_DAEMON="require")["results"]
    assert json.loads(ok(rag("watch", "--stop", "--json", timeout=120)).stdout)["code"] == 0
    verify = rag("verify", "--json")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def _wait_for_a_write(manifest: Path, timeout: float) -> bool:
    """Poll the manifest (read-only) until a batch write is in progress; False if none seen."""
    import sqlite3

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            db = sqlite3.connect(f"file:{manifest}?mode=ro", uri=True, timeout=0.1)
            try:
                row = db.execute("SELECT value FROM meta WHERE key = 'vectors_dirty'").fetchone()
                chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:
            row, chunks = None, 0
        if row and row[0] == "1":
            return True
        if chunks and row and row[0] == "0" and chunks > 150:
            return False  # most of the vault is in: no write was caught
        time.sleep(0.005)
    return False


def _connect(path: Path) -> socket.socket:
    """A raw connection, whatever the length of the temp folder's path (``Address``)."""
    from ragcli.serve.protocol import Address

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with Address(path) as address:
        sock.connect(address)
    return sock


def _exchange(path: Path, data: bytes, timeout: float = 30.0) -> list[dict]:
    """Send raw bytes, half-close, read every reply line."""
    sock = _connect(path)
    sock.settimeout(timeout)
    try:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except BrokenPipeError:
            pass
        raw = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            raw += chunk
    finally:
        sock.close()
    return [json.loads(line) for line in raw.splitlines()]


def test_malformed_requests_get_an_error_never_a_crash(vault, index_dir, rag_home):
    ok(rag("index", str(vault)))
    pid = detach()
    path = index_dir / "watch.sock"
    cases = [b"\x00\xff\xfe\x80garbage\n", b"not json\n", b"[1, 2]\n", b'"search"\n', b"{}\n",
             b'{"op": "exec", "cmd": "touch /tmp/pwned"}\n', b'{"op": "__import__"}\n',
             b'{"op": "search", "settings": "x", "query": 42}\n',
             b'{"op": "search", "settings": "x", "query": "q", "k": "ten"}\n',
             b'{"op": "ask", "settings": "x", "question": "q", "temperature": NaN}\n',
             b"[" * 200_000 + b"\n"]
    for data in cases:
        replies = _exchange(path, data)
        assert len(replies) == 1 and replies[0]["code"] == "bad_request", (data[:40], replies)
    # Several requests on one connection: each gets its own line; an unterminated last one too.
    replies = _exchange(path, b'{"op": "status"}\n\n{"op": "nope"}\n{"op": "status"}')
    assert [("pid" in r, r.get("code")) for r in replies] == [(True, None), (False, "bad_request"), (True, None)]
    # A line past the limit: an error, then the connection ends.
    replies = _exchange(path, b"x" * (3 << 20) + b'\n{"op": "status"}\n', timeout=60)
    assert len(replies) == 1 and "longer than" in replies[0]["error"]
    # A valid search with settings that are not the watcher's: refused, named.
    replies = _exchange(path, b'{"op": "search", "settings": "other", "query": "bread"}\n')
    assert replies[0]["code"] == "settings"
    # A client that connects and says nothing, and one that sends half a line and leaves.
    silent = _connect(path)
    half = _connect(path)
    half.sendall(b'{"op": "sea')
    half.close()
    assert not Path("/tmp/pwned").exists()

    # Still alive and answering, through the CLI.
    assert alive(pid)
    assert search_json("lentils", RAG_DAEMON="require")["results"]
    silent.close()
    assert json.loads(ok(rag("watch", "--stop", "--json", timeout=120)).stdout)["code"] == 0
    assert "Traceback" not in (index_dir / "watch.log").read_text()


def test_a_long_lived_reader_sees_later_writes_after_hybrid_searches(vault, rag_home):
    """Hybrid search once wrote temp tables, which left the reader's SQLite transaction open:
    a reader living on (chat, the watcher's socket) then saw the index as it was, forever."""
    from ragcli.config import load_config
    from ragcli.pipeline import index
    from ragcli.retrieve import Filters, Searcher

    config = load_config()
    index(config, [vault])
    searcher = Searcher(config)
    try:
        assert searcher.search("bread", k=3)  # hybrid: completes both sides' scores
        assert searcher.search("sun", k=3, filters=Filters(path="*/Garden/*"))
        (vault / "Opera.md").write_text("# Opera\n\nTosca at the Arena di Verona. Marker: libretto.\n")
        index(config, [vault])
        assert [h.chunk.path for h in searcher.search("libretto", k=3)][:1] == [str(vault / "Opera.md")]
        assert [h.chunk.path for h in searcher.search("libretto", k=3, mode="keyword")] == [str(vault / "Opera.md")]
    finally:
        searcher.close()
