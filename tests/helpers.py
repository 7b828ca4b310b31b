"""Helpers shared by the tests that drive the real CLI in child processes (verify, crash,
hostile input, hygiene, index): run ``rag``, write a small vault, read back what an index
amounts to. A plain module: tests import it as ``from helpers import ...`` (pytest puts
tests/ on sys.path, as it does for ``conftest``); bench/ scripts put tests/ on sys.path.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WORDS = ("river mountain lantern copper orchard meadow glacier harbor violet canyon thunder "
         "pepper saddle quartz ember falcon willow marble cobalt tundra prairie beacon velvet "
         "anchor juniper basalt cedar lagoon summit nectar walnut crystal ferry granite "
         "hollow ivory kettle lemon mosaic nutmeg oyster pebble quiver raven spruce tulip").split()


def rag_env(home: Path | None = None, env: dict | None = None) -> dict[str, str]:
    """This process's environment for a child ``python -m ragcli``: this checkout's package
    first, ``home`` as RAG_HOME, then ``env``."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    if home is not None:
        e["RAG_HOME"] = str(home)
    e.update(env or {})
    return e


def rag(*args, home: Path | None = None, env: dict | None = None, timeout: float = 600,
        input: bytes | None = None, text: bool = False) -> subprocess.CompletedProcess:
    """Run the real CLI in a child process (``python -m ragcli.cli``); bytes in and out, or
    str with ``text``."""
    return subprocess.run([sys.executable, "-m", "ragcli.cli", *map(str, args)], capture_output=True,
                          env=rag_env(home, env), timeout=timeout, input=input, text=text)


def rag_popen(*args, home: Path | None = None, env: dict | None = None, **kw) -> subprocess.Popen:
    kw.setdefault("stdout", subprocess.DEVNULL)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([sys.executable, "-m", "ragcli.cli", *map(str, args)], env=rag_env(home, env), **kw)


def ok(proc: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-4000:])
    traceback = "Traceback" if isinstance(proc.stderr, str) else b"Traceback"
    assert traceback not in proc.stderr, proc.stderr[-4000:]
    return proc


def unprivileged(unreadable: Path) -> list[str]:
    """A command prefix under which ``unreadable`` (mode 000) cannot be read: none for a user,
    and for root (who reads any file) setpriv with every capability dropped. Still root, so
    it reads the checkout and its venv wherever they are (a 0700 home, ``mktemp -d``), unlike
    another user. Skips the test when that cannot be arranged."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    if shutil.which("setpriv") is None or subprocess.run(prefix + ["cat", str(unreadable)],
                                                         capture_output=True).returncode == 0:
        pytest.skip("root, and setpriv cannot drop the capabilities that read a mode-000 file")
    return prefix


def watching(home: Path) -> bool:
    """The watcher on ``home`` has done its start-up sync (its state file says so)."""
    try:
        state = json.loads((home / "index" / "watch.json").read_text())
    except (OSError, ValueError):
        return False
    return state.get("state") == "watching" and state.get("syncs", 0) >= 1


def wait_for(check, what, timeout: float = 180.0, *, alive: subprocess.Popen | None = None,
             log: Path | None = None, every: float = 0.1):
    """Poll ``check`` until it returns something true, and return that: how a test waits for
    a state, never with a fixed sleep. Fails the test after ``timeout`` seconds, or at once
    when ``alive`` (a process that must stay up) has exited; the message says ``what`` (or
    calls it) and ends with the tail of ``log``. Generous deadlines: a loaded 2-core machine
    loading models is slow, and no test asserts on time."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        ended = alive is not None and alive.poll() is not None
        if ended or time.monotonic() > deadline:
            why = f"the process exited ({alive.returncode})" if ended else f"timed out after {timeout:g}s"
            tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
            pytest.fail(f"{why} while waiting for {what() if callable(what) else what}\n{tail}")
        time.sleep(every)


def paragraph(rng: random.Random, n: int = 60) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def note_text(rng: random.Random, title: str, sections: int = 3, paragraphs: int = 2) -> str:
    parts = [f"# {title}", ""]
    for s in range(sections):
        parts += [f"## {title} part {s}", ""]
        parts += [paragraph(rng) + "\n" for _ in range(paragraphs)]
    return "\n".join(parts) + "\n"


def write_vault(folder: Path, notes: int = 12, seed: int = 0) -> Path:
    """A small vault the test owns: a few folders of notes with headings and paragraphs."""
    rng = random.Random(seed)
    for i in range(notes):
        sub = folder / ("projects" if i % 3 == 0 else "daily" if i % 3 == 1 else "ideas")
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note {i:02d}.md").write_text(note_text(rng, f"Note {i}"), encoding="utf-8")
    return folder


def write_notes(root: Path, notes: dict[str, str]) -> Path:
    """A vault of the given notes (relative path -> text) under ``root``."""
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def chroma_ids(index_dir: Path) -> set[str]:
    """The ids in the Chroma store, read in a child process (no stale in-process cache)."""
    code = ("import sys, json, chromadb\nfrom chromadb.config import Settings\n"
            "c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))\n"
            "ids = []\n"
            "for col in c.list_collections():\n"
            "    col = c.get_collection(getattr(col, 'name', col))\n"
            "    ids += col.get(include=[])['ids']\n"
            "print(json.dumps(ids))\n")
    e = dict(os.environ, ANONYMIZED_TELEMETRY="False")
    out = subprocess.run([sys.executable, "-c", code, str(index_dir / "chroma")], capture_output=True,
                         text=True, env=e, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(json.loads(out.stdout))


def index_state(home: Path) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """(path -> chunk ids) from the manifest, and Chroma's id set: what a build amounts to."""
    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    try:
        by_path: dict[str, set[str]] = {p: set() for (p,) in db.execute("SELECT path FROM files")}
        for cid, path in db.execute("SELECT id, path FROM chunks"):
            by_path.setdefault(path, set()).add(cid)
    finally:
        db.close()
    return {p: frozenset(ids) for p, ids in by_path.items()}, frozenset(chroma_ids(home / "index"))


def clean_build(notes: Path, home: Path) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    if home.exists():
        shutil.rmtree(home)
    home.mkdir()
    ok(rag("index", notes, home=home))
    return index_state(home)


def verify_json(home: Path, *flags: str) -> tuple[int, dict]:
    proc = rag("verify", "--json", *flags, home=home)
    assert b"Traceback" not in proc.stderr, proc.stderr[-4000:]
    return proc.returncode, json.loads(proc.stdout)


def sql(home: Path, statement: str, params=()) -> None:
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    db.execute(statement, params)
    db.commit()
    db.close()


def seed_vector_cache(home: Path, source_home: Path) -> None:
    """Copy ``source_home``'s cached vectors (the same model, keyed by chunk text) into the
    index at ``home``: its first `rag index` of the same notes then embeds nothing, and
    measures or tests everything else."""
    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    try:
        db.execute("ATTACH ? AS source", (str(source_home / "index" / "manifest.sqlite"),))
        db.execute("INSERT OR IGNORE INTO vectors SELECT * FROM source.vectors")
        db.commit()
    finally:
        db.close()


def chroma_do(home: Path, code: str) -> None:
    """Change the Chroma store directly, behind the index's back, in a child process."""
    prelude = ("import sys, numpy as np, chromadb\nfrom chromadb.config import Settings\n"
               "c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))\n"
               "col = c.get_collection(c.list_collections()[0].name)\n")
    out = subprocess.run([sys.executable, "-c", prelude + code, str(home / "index" / "chroma")],
                         capture_output=True, text=True, env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    assert out.returncode == 0, out.stderr[-2000:]


def on_a_terminal(args, stream: str = "stdout", env: dict | None = None,
                  timeout: float = 600) -> tuple[int, bytes]:
    """`rag ARGS` with ``stream`` (stdout or stderr) on a pseudo-terminal, the other one
    discarded: (exit code, what the terminal received)."""
    import pty
    import select

    master, slave = pty.openpty()
    e = rag_env(env=env)
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: slave}
    proc = subprocess.Popen([sys.executable, "-m", "ragcli.cli", *map(str, args)], stdin=subprocess.DEVNULL,
                            env=e, **streams)
    os.close(slave)
    output = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            output += data
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, output
