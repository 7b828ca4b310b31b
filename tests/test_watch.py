"""`rag watch`: a real daemon process on real files, checked through real searches.

The daemon runs as ``python -m ragcli.cli watch`` with this test's RAG_HOME; the tests
change files the way editors do and poll a search (a long-lived Searcher in this process,
or `rag search --json` in another) until the expected state shows up or a generous
deadline passes. No time is asserted except those deadlines.
"""

from __future__ import annotations

import json
import os
import re
import plistlib
import shutil
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from conftest import VAULT, needs_corpora
from helpers import rag as _rag
from helpers import ok, rag_env, seed_vector_cache, wait_for, write_notes

ROOT = Path(__file__).resolve().parents[1]
rag = partial(_rag, text=True, timeout=120.0)  # this file reads str output
DEADLINE = 60.0  # seconds to wait for an expected state (the first embedding loads a model)


# ---------------------------------------------------------------- helpers


class Daemon:
    """`rag watch` as a child process, its log in a file."""

    def __init__(self, home: Path, *args: str, prefix: tuple[str, ...] = ()):
        self.home = home
        self.log_path = home / f"watch-{time.monotonic_ns()}.log"
        self.log = open(self.log_path, "w")
        argv = [*prefix, sys.executable, "-m", "ragcli.cli", "watch", "--verbose", *args]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log, env=rag_env(), cwd=ROOT)

    @property
    def state_path(self) -> Path:
        return self.home / "index" / "watch.json"

    def state(self) -> dict | None:
        try:
            return json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return None

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = DEADLINE) -> dict:
        """Until the start-up reconcile is done and the embedder is loaded."""
        def ready():
            st = self.state()
            return st if st and st.get("state") == "watching" and st.get("syncs", 0) >= 1 \
                and self.proc.poll() is None else None
        return wait_for(ready, "the watcher to start", timeout, alive=self.proc, log=self.log_path)

    def terminate(self, timeout: float = 5.0) -> tuple[int, float]:
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=timeout)
        return code, time.monotonic() - started

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture
def daemons():
    started: list[Daemon] = []

    def start(home: Path, *args: str, **kw) -> Daemon:
        d = Daemon(home, *args, **kw)
        started.append(d)
        return d

    yield start
    for d in started:
        d.close()


class Reader:
    """A long-lived reader in this process (another process than the daemon), like `rag chat`."""

    def __init__(self):
        from ragcli.config import load_config
        from ragcli.retrieve import Searcher

        self.searcher = Searcher(load_config())

    def keyword_paths(self, query: str) -> set[str]:
        return {h.chunk.path for h in self.searcher.search(query, k=20, mode="keyword")}

    def vector_top(self, query: str) -> str | None:
        hits = self.searcher.search(query, k=1, mode="vector")
        return hits[0].chunk.path if hits else None

    def close(self) -> None:
        self.searcher.close()


NOTES = {
    "Garden/Tomatoes.md": "# Tomatoes\n\nTomatoes want full sun, deep watering and a stake. "
                          "Pinch the suckers. Marker: quillwort.\n",
    "Garden/Compost.md": "# Compost\n\nLayer brown leaves with green kitchen scraps and turn the heap "
                         "every week. Marker: bracken.\n",
    "Kitchen/Bread.md": "# Sourdough bread\n\nFeed the starter, autolyse the flour, fold four times, "
                        "proof overnight in the fridge. Marker: farinose.\n",
    "Kitchen/Soup.md": "# Lentil soup\n\nSweat onions and carrots, add red lentils and cumin, simmer "
                       "twenty minutes. Marker: pottage.\n",
    "Travel.md": "# Train travel\n\nNight trains across the Alps; book couchettes early. Marker: wagonlit.\n",
}


@pytest.fixture
def vault(tmp_path) -> Path:
    root = write_notes(tmp_path / "vault", NOTES)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "workspace.json").write_text("{}")
    return root


def atomic_save(path: Path, text: str) -> None:
    """What VS Code, Obsidian plug-ins and many editors do: write a temp file, rename it over."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def vim_save(path: Path, text: str) -> None:
    """vim's default on Linux: probe with 4913, rename the note to note~, write, drop note~."""
    probe = path.with_name("4913")
    probe.write_text("")
    probe.unlink()
    swap = path.with_name(f".{path.name}.swp")
    swap.write_bytes(b"b0VIM 9.0" + b"\0" * 100)
    backup = path.with_name(path.name + "~")
    os.replace(path, backup)
    path.write_text(text)
    backup.unlink()
    swap.unlink()


# ---------------------------------------------------------------- no model needed


def test_import_watch_does_not_import_watchdog():
    code = ("import ragcli.cli, ragcli.watch, ragcli.commands.watch, sys; "
            "print([m for m in ('watchdog', 'chromadb', 'llama_cpp') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rag_env(), check=True)
    assert out.stdout.strip() == "[]"


def test_editor_noise_is_not_work(tmp_path):
    from watchdog.events import (DirModifiedEvent, DirMovedEvent, FileClosedEvent, FileCreatedEvent,
                                 FileDeletedEvent, FileModifiedEvent, FileMovedEvent)

    from ragcli.watch.changes import Relevance, event_paths

    root = tmp_path / "v"
    index_dir = root / "index-inside-root"
    rel = Relevance([root], [index_dir])
    r = str(root)
    noise = [FileCreatedEvent(f"{r}/.note.md.swp"), FileModifiedEvent(f"{r}/.note.md.swx"),
             FileCreatedEvent(f"{r}/4913"), FileDeletedEvent(f"{r}/note.md~"),
             FileCreatedEvent(f"{r}/.#note.md"), FileCreatedEvent(f"{r}/note.md.tmp"),
             FileModifiedEvent(f"{r}/.obsidian/workspace.json"), FileCreatedEvent(f"{r}/.obsidian/x.md"),
             FileModifiedEvent(f"{r}/.git/index"), FileModifiedEvent(f"{index_dir}/manifest.md"),
             DirModifiedEvent(f"{r}/Folder"), FileClosedEvent(f"{r}/note.md"),
             FileCreatedEvent("/elsewhere/note.md"), FileModifiedEvent(f"{r}/image.png")]
    for event in noise:
        assert event_paths(event, rel) == ([], False), event
    # An atomic save: only the note's end of the move matters.
    assert event_paths(FileMovedEvent(f"{r}/note.md.tmp", f"{r}/note.md"), rel) == ([f"{r}/note.md"], False)
    # Moving a note to Obsidian's .trash is a delete of the old path.
    assert event_paths(FileMovedEvent(f"{r}/a.md", f"{r}/.trash/a.md"), rel) == ([f"{r}/a.md"], False)
    assert event_paths(DirMovedEvent(f"{r}/A", f"{r}/B"), rel) == ([f"{r}/A", f"{r}/B"], False)
    assert event_paths(FileModifiedEvent(f"{r}/Notes/a.PDF"), rel) == ([f"{r}/Notes/a.PDF"], False)
    assert event_paths(FileModifiedEvent(f"{r}/.ragignore"), rel) == ([], True)


def test_debounce_waits_for_quiet_and_caps_busy_files():
    from ragcli.watch.changes import PendingChanges

    p = PendingChanges(debounce=1.0, max_delay=5.0)
    p.add("/v/a.md", now=100.0)
    p.add("/v/a.md", now=100.6)  # a second write within the quiet period moves it on
    assert p.take_due(now=101.2) == []
    assert p.take_due(now=101.6) == ["/v/a.md"]
    for t in range(10):  # a file written every 0.5 s is still synced after max_delay
        p.add("/v/log.md", now=200.0 + t * 0.5)
    assert p.take_due(now=205.0) == ["/v/log.md"]
    assert len(p) == 0


def test_print_service_systemd_and_launchd(tmp_path, rag_home):
    notes = tmp_path / "my notes"
    notes.mkdir()
    unit = rag("watch", "--print-service", "systemd", "--debounce", "2", str(notes))
    assert unit.returncode == 0, unit.stderr
    exec_line = next(line for line in unit.stdout.splitlines() if line.startswith("ExecStart="))
    command = exec_line.split("=", 1)[1]
    assert command.startswith("/")  # an absolute executable: services have no useful PATH
    assert f'"{notes}"' in command and "watch" in command and "--debounce 2" in command
    assert f"Environment=RAG_HOME={rag_home}" in unit.stdout
    assert "[Install]" in unit.stdout and "Restart=on-failure" in unit.stdout

    plist = rag("watch", "--print-service", "launchd", str(notes))
    assert plist.returncode == 0, plist.stderr
    data = plistlib.loads(plist.stdout.encode())
    assert data["ProgramArguments"][-1] == str(notes)
    assert os.path.isabs(data["ProgramArguments"][0])
    assert data["EnvironmentVariables"]["RAG_HOME"] == str(rag_home)

    bad = rag("watch", "--print-service", "upstart", str(notes))
    assert bad.returncode == 2 and "upstart" in bad.stderr

    link = tmp_path / "notes link"  # the service watches the folder as the user named it
    link.symlink_to(notes, target_is_directory=True)
    unit = rag("watch", "--print-service", "systemd", str(link))
    assert unit.returncode == 0 and f'"{link}"' in unit.stdout and f'"{notes}"' not in unit.stdout


# ---------------------------------------------------------------- the daemon, small vault


def test_daemon_follows_edits_moves_and_deletes(vault, rag_home, daemons):
    d = daemons(rag_home, str(vault), "--debounce", "0.3")
    d.wait_ready()
    reader = Reader()
    try:
        assert str(vault / "Kitchen/Bread.md") in reader.keyword_paths("farinose")

        # 1. A new note becomes searchable, by keyword and by vector, in this long-lived reader.
        new = vault / "Garden" / "Bees.md"
        new.write_text("# Bees\n\nA hive needs a dry spot sheltered from wind; inspect brood frames "
                       "every nine days in swarm season. Marker: apiarist.\n")
        wait_for(lambda: str(new) in reader.keyword_paths("apiarist"), "the new note", DEADLINE, alive=d.proc)
        wait_for(lambda: reader.vector_top("inspect brood frames of the hive in swarm season") == str(new),
                 "the new note's vectors", DEADLINE, alive=d.proc)

        # 2. An atomic save replaces the text: the new words are found, the old ones are gone.
        atomic_save(vault / "Travel.md", "# Ferries\n\nThe overnight ferry to the islands leaves at ten. "
                                         "Marker: gangplank.\n")
        wait_for(lambda: str(vault / "Travel.md") in reader.keyword_paths("gangplank"), "the saved text", DEADLINE,
                 alive=d.proc)
        assert reader.keyword_paths("wagonlit") == set()

        # vim's save dance (4913, .swp, note~) ends in the same state; its temp files never enter.
        vim_save(vault / "Kitchen/Soup.md", "# Pea soup\n\nSplit peas, ham hock, thyme. Marker: porridge.\n")
        wait_for(lambda: str(vault / "Kitchen/Soup.md") in reader.keyword_paths("porridge"), "the vim save", DEADLINE,
                 alive=d.proc)
        assert reader.keyword_paths("pottage") == set()

        # 3. A moved folder: its notes under the new paths, none under the old.
        shutil.move(str(vault / "Kitchen"), str(vault / "Recipes"))
        wait_for(lambda: str(vault / "Recipes/Bread.md") in reader.keyword_paths("farinose"), "the moved folder",
                 DEADLINE, alive=d.proc)
        wait_for(lambda: not any("/Kitchen/" in p for p in reader.keyword_paths("farinose OR porridge")),
                 "the old folder to leave the index", DEADLINE, alive=d.proc)

        # 4. A deleted note is gone (keyword and vector side).
        (vault / "Garden/Compost.md").unlink()
        wait_for(lambda: reader.keyword_paths("bracken") == set(), "the deleted note", DEADLINE, alive=d.proc)
        assert reader.vector_top("layer brown leaves with green kitchen scraps, turn the heap") \
            != str(vault / "Garden/Compost.md")

        # Nothing the editors left behind was indexed or even looked at.
        log = d.text()
        for noise in ("4913", ".swp", "Soup.md~", "Travel.md.tmp"):
            assert noise not in log, noise
        indexed = {p for p in _manifest_paths(rag_home)}
        assert indexed == {str(vault / p) for p in ("Garden/Tomatoes.md", "Garden/Bees.md", "Recipes/Bread.md",
                                                     "Recipes/Soup.md", "Travel.md")}
    finally:
        reader.close()

    # 6. SIGTERM: exit 0 within 5 s, lock released, status no longer shows a watcher.
    code, _seconds = d.terminate(timeout=5.0)
    assert code == 0, d.text()
    from ragcli.store.lock import read_holder

    assert read_holder(rag_home / "index" / "write.lock") is None
    assert not d.state_path.exists()
    status = json.loads(rag("status", "--json").stdout)
    assert status["watcher"] is None and status["writer"] is None


def _manifest_paths(home: Path) -> set[str]:
    from ragcli.config import load_config
    from ragcli.store import Index

    idx = Index.open_reader(load_config())
    try:
        return set(idx.files())
    finally:
        idx.close()


def test_second_writer_is_refused_and_status_shows_the_watcher(vault, rag_home, daemons):
    d = daemons(rag_home, str(vault), "--debounce", "0.3")
    d.wait_ready()
    started = time.monotonic()
    other = rag("index", str(vault), timeout=10)  # 5. never a hang: subprocess.run would raise
    assert time.monotonic() - started < 10
    assert other.returncode == 7, other.stderr
    assert f"pid {d.proc.pid}" in other.stderr and "rag watch" in other.stderr
    assert "database is locked" not in other.stderr

    status = json.loads(rag("status", "--json").stdout)
    assert status["watcher"]["pid"] == d.proc.pid
    assert status["watcher"]["roots"] == [str(vault)]
    assert "pending" in status["watcher"] and status["watcher"]["since"] <= time.time()
    text = rag("status").stdout
    assert f"Watcher:    pid {d.proc.pid}" in text

    # A second watcher is refused the same way.
    second = rag("watch", str(vault), timeout=10)
    assert second.returncode == 7 and f"pid {d.proc.pid}" in second.stderr

    # Readers work during writes: a search from another process sees a new note.
    (vault / "Opera.md").write_text("# Opera\n\nTosca at the Arena di Verona. Marker: libretto.\n")
    hits = wait_for(lambda: [h for h in json.loads(rag("search", "--json", "libretto").stdout)["results"]
                             if h["path"] == str(vault / "Opera.md")], "a search to see it", DEADLINE, alive=d.proc)
    assert hits

    # A save that leaves the bytes as they were costs a hash, no parse and no embedding.
    def sync_lines():
        return [x for x in d.text().splitlines() if " sync: " in x]
    before = len(sync_lines())
    travel = vault / "Travel.md"
    travel.write_text(travel.read_text())
    line = wait_for(lambda: next((x for x in sync_lines()[before:] if " unchanged" in x and " 0 unchanged" not in x),
                                 None), "the no-op save's sync", DEADLINE, alive=d.proc)
    assert "sync: 0 indexed, 0 removed, 1 unchanged" in line, line
    assert d.terminate()[0] == 0


def test_restart_reconciles_what_changed_while_stopped(vault, rag_home, daemons):
    d = daemons(rag_home, str(vault))
    d.wait_ready()
    assert d.terminate()[0] == 0

    # While no watcher runs: create, modify, delete, move a note and a folder.
    (vault / "Poetry.md").write_text("# Poetry\n\nA sonnet has fourteen lines. Marker: volta.\n")
    (vault / "Travel.md").write_text("# Cycling\n\nThe Danube path from Passau to Vienna. Marker: pannier.\n")
    (vault / "Garden/Compost.md").unlink()
    shutil.move(str(vault / "Kitchen"), str(vault / "Cooking"))

    d2 = daemons(rag_home)  # no paths: the remembered roots
    d2.wait_ready()
    reader = Reader()
    try:
        assert str(vault / "Poetry.md") in reader.keyword_paths("volta")
        assert reader.keyword_paths("pannier") == {str(vault / "Travel.md")}
        assert reader.keyword_paths("wagonlit") == set()
        assert reader.keyword_paths("bracken") == set()
        assert reader.keyword_paths("farinose") == {str(vault / "Cooking/Bread.md")}
        assert reader.vector_top("a sonnet has fourteen lines") == str(vault / "Poetry.md")
    finally:
        reader.close()
    # Only what changed was indexed again: new, modified and the 2 moved notes (new paths);
    # deleted and the moved notes' old paths removed; Tomatoes.md left alone.
    line = next(x for x in d2.text().splitlines() if "start-up reconcile:" in x)
    assert "4 indexed, 3 removed, 1 unchanged" in line, line
    assert d2.terminate()[0] == 0


def test_unparseable_file_is_skipped_and_the_daemon_goes_on(vault, rag_home, daemons):
    d = daemons(rag_home, str(vault), "--debounce", "0.3")
    d.wait_ready()
    (vault / "broken.pdf").write_bytes(b"%PDF-1.4\n" + os.urandom(2000))
    (vault / "binary.md").write_bytes(b"\x00\x01\x02" * 1000)
    wait_for(lambda: "skipped" in d.text() and "broken.pdf" in d.text(), "the skip to be logged", DEADLINE,
             alive=d.proc)
    (vault / "After.md").write_text("# After\n\nStill alive after a bad file. Marker: phoenix.\n")
    _wait_found(vault / "After.md", "phoenix", d, "the next note")
    assert d.proc.poll() is None
    assert d.terminate()[0] == 0


def test_sigterm_during_a_long_reconcile_rolls_back_and_restart_finishes(tmp_path, rag_home, daemons):
    """SIGTERM while the first start is still embedding a vault: out within 5 s, exit 0, the
    index consistent (`rag verify`), and the next start picks up where this one stopped."""
    import random

    rng = random.Random(3)
    words = [w for w in (ROOT / "README.md").read_text().lower().split() if w.isalpha()] or ["note"]
    vault = tmp_path / "big"
    vault.mkdir()
    for i in range(12):
        paragraphs = ["# Note %d" % i] + [" ".join(rng.choice(words) for _ in range(120)) for _ in range(12)]
        (vault / f"n{i:02d}.md").write_text("\n\n".join(paragraphs) + "\n")
    d = daemons(rag_home, str(vault))
    # The first note parsed and chunked: the run is inside its first batch (12 notes of
    # ~12 chunks make two batches of FLUSH_CHUNKS), before or during its embedding.
    wait_for(lambda: "indexed " + str(vault) in d.text(), "the first note to be chunked", 600, alive=d.proc)
    assert d.proc.poll() is None
    # Not the 5 s of an idle daemon: a Chroma write in hand is finished, never cut, and
    # Chroma's native code holds the GIL, so on a loaded machine this can take longer.
    code, _seconds = d.terminate(timeout=30.0)
    assert code == 0, d.text()
    verify = rag("verify", "--json")
    assert verify.returncode == 0, verify.stdout + verify.stderr

    d2 = daemons(rag_home)
    d2.wait_ready(timeout=600)
    assert _manifest_paths(rag_home) == {str(p) for p in vault.glob("*.md")}
    assert d2.terminate()[0] == 0
    verify = rag("verify", "--json")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def _inotify_masks(pid: int) -> list[int]:
    """The event mask of every inotify watch the process holds (from /proc/PID/fdinfo)."""
    masks = []
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            text = info.read_text()
        except OSError:
            continue
        masks += [int(m, 16) for m in re.findall(r"^inotify wd:\S+ ino:\S+ sdev:\S+ mask:([0-9a-f]+)", text, re.M)]
    return masks


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_the_watcher_does_not_ask_inotify_for_opens_and_closes(vault, rag_home, daemons):
    """Reading a folder opens it: with IN_OPEN / IN_CLOSE_NOWRITE watched, walking a big vault
    (our reconcile, or watchdog's after a queue overflow) floods the kernel's queue, and on
    MDN's 14k folders the idle watcher spun a core recovering from its own walks."""
    for depth in range(3):
        (vault / "Deep" / "/".join(f"d{i}" for i in range(depth + 1))).mkdir(parents=True, exist_ok=True)
    d = daemons(rag_home, str(vault), "--debounce", "0.3")
    assert d.wait_ready()["observer"] == "native"
    masks = _inotify_masks(d.proc.pid)
    folders = 1 + sum(1 for p in vault.rglob("*") if p.is_dir() and not p.name.startswith("."))
    assert len(masks) >= folders
    in_open, in_close_nowrite, in_modify, in_create = 0x20, 0x10, 0x2, 0x100
    assert all(m & (in_open | in_close_nowrite) == 0 for m in masks), [hex(m) for m in masks]
    assert all(m & in_modify and m & in_create for m in masks)
    note = vault / "Deep" / "d0" / "d1" / "Found.md"
    note.write_text("# Found\n\nA note written below the watched folders. Marker: cassowary.\n")
    _wait_found(note, "cassowary", d, "the new note")
    assert d.terminate()[0] == 0


def _wait_found(note, word: str, d, what: str) -> None:
    """Until a keyword search for ``word`` finds ``note`` (the daemon ``d`` must stay up)."""
    reader = Reader()
    try:
        wait_for(lambda: str(note) in reader.keyword_paths(word), what, DEADLINE, alive=d.proc)
    finally:
        reader.close()


def _unshare_works() -> bool:
    if not sys.platform.startswith("linux") or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-U", "-r", "sh", "-c", "echo 5 > /proc/sys/user/max_inotify_watches"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs user namespaces (unshare -U) to lower the inotify limit")
def test_inotify_limit_falls_back_to_polling(vault, rag_home, daemons):
    """A real ENOSPC: the watch limit lowered for this daemon's user namespace only (the host's
    fs.inotify.max_user_watches is never touched)."""
    for depth in range(6):
        (vault / "Deep" / "/".join(f"d{i}" for i in range(depth + 1))).mkdir(parents=True, exist_ok=True)
    script = "echo 3 > /proc/sys/user/max_inotify_watches && exec \"$@\""
    d = daemons(rag_home, str(vault), "--debounce", "0.3", prefix=("unshare", "-U", "-r", "sh", "-c", script, "sh"))
    state = d.wait_ready()
    assert state["observer"] == "polling"
    assert "max_user_watches" in d.text() and "falling back to polling" in d.text()
    deep = vault / "Deep/d0/d1/d2/d3/d4/d5/Far.md"
    deep.write_text("# Far\n\nA note in a folder inotify could not watch. Marker: spelunker.\n")
    _wait_found(deep, "spelunker", d, "the deep note")
    assert d.terminate()[0] == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs user namespaces (unshare -U) to lower the inotify limit")
def test_no_inotify_watch_at_all_falls_back_to_polling(vault, rag_home, daemons):
    script = "echo 0 > /proc/sys/user/max_inotify_watches && exec \"$@\""
    d = daemons(rag_home, str(vault), prefix=("unshare", "-U", "-r", "sh", "-c", script, "sh"))
    assert d.wait_ready()["observer"] == "polling"
    assert "inotify watch limit reached" in d.text() and "sysctl fs.inotify.max_user_watches=524288" in d.text()
    assert d.terminate()[0] == 0


# ---------------------------------------------------------------- the real vault


@needs_corpora
def test_acceptance_on_the_obsidian_help_vault(tmp_path, rag_home, daemons, help_vault_env):
    vault = tmp_path / "obsidian-help"
    shutil.copytree(VAULT, vault)
    # The session's index of the same notes lends its vectors: the first start reads, chunks
    # and writes all 173 notes but embeds nothing (the cache is keyed by chunk text and model).
    (tmp_path / "empty").mkdir()
    ok(rag("index", str(tmp_path / "empty")))
    seed_vector_cache(rag_home, Path(help_vault_env["RAG_HOME"]))
    d = daemons(rag_home, str(vault), "--debounce", "1")
    d.wait_ready(timeout=600)
    reader = Reader()
    try:
        # 1. A new note, then an atomic-rename save of it.
        new = vault / "Getting started" / "Zettel inbox.md"
        new.write_text("# Zettel inbox\n\nCapture fleeting ideas in a quarantined inbox. Marker: xylocarp.\n")
        wait_for(lambda: str(new) in reader.keyword_paths("xylocarp"), "the new note", DEADLINE, alive=d.proc)
        atomic_save(new, "# Zettel inbox\n\nProcess the inbox on Fridays. Marker: quincunx.\n")
        wait_for(lambda: str(new) in reader.keyword_paths("quincunx"), "the saved note", DEADLINE, alive=d.proc)
        assert reader.keyword_paths("xylocarp") == set()

        # 2. A moved folder.
        old_dir, new_dir = vault / "Obsidian Publish", vault / "Archive" / "Publish"
        moved = sorted(str(p.relative_to(old_dir)) for p in old_dir.rglob("*.md"))
        assert moved
        new_dir.parent.mkdir()
        shutil.move(str(old_dir), str(new_dir))

        def folder_moved():
            paths = _manifest_paths(rag_home)
            return all(str(new_dir / m) in paths for m in moved) and not any(
                p.startswith(str(old_dir) + "/") for p in paths)
        wait_for(folder_moved, "the moved folder", DEADLINE, alive=d.proc)
        title = (new_dir / moved[0]).read_text().splitlines()[0].lstrip("# ").strip() or moved[0]
        hits = {h.chunk.path for h in reader.searcher.search(title, k=10)}
        assert not any(h.startswith(str(old_dir) + "/") for h in hits)

        # 3. A deleted note.
        gone = vault / "Home.md"
        gone.unlink()
        wait_for(lambda: str(gone) not in _manifest_paths(rag_home), "the deleted note", DEADLINE, alive=d.proc)
        assert all(h.chunk.path != str(gone) for h in reader.searcher.search("Obsidian Help home", k=20))
    finally:
        reader.close()

    # 5. A second writer beside the daemon.
    other = rag("index", timeout=10)
    assert other.returncode == 7 and f"pid {d.proc.pid}" in other.stderr

    # 6. SIGTERM.
    assert d.terminate(timeout=5.0)[0] == 0
    assert json.loads(rag("status", "--json").stdout)["watcher"] is None

    # 4. Changes while stopped are reconciled on restart, without re-reading unchanged notes.
    (vault / "Offline.md").write_text("# Offline\n\nWritten while no watcher ran. Marker: hibernaculum.\n")
    (vault / "Getting started" / "Zettel inbox.md").unlink()
    d2 = daemons(rag_home)
    d2.wait_ready(timeout=120)
    reader = Reader()
    try:
        assert str(vault / "Offline.md") in reader.keyword_paths("hibernaculum")
        assert reader.keyword_paths("quincunx") == set()
    finally:
        reader.close()
    line = next(x for x in d2.text().splitlines() if "start-up reconcile:" in x)
    assert "1 indexed" in line and "1 removed" in line, line
    assert d2.terminate()[0] == 0
