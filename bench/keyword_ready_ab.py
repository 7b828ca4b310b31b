"""Two checkouts' `rag index` started together on the same notes, each in a fresh home: when
the last note (sorted paths: phase one goes in that order) has its keyword rows in. Each run
is stopped there (phase two, the vectors, is not waited for). Side by side, a busy machine
slows both alike.

    python bench/keyword_ready_ab.py NOTES BEFORE_CODE AFTER_CODE

Prints figures; asserts nothing.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import MODELS_CACHE


def main() -> None:
    notes, runs = sys.argv[1], {"before": sys.argv[2], "after": sys.argv[3]}
    last = str(max(Path(notes).rglob("*.md")))
    work = Path(tempfile.mkdtemp(prefix="keyword-ready-"))
    procs, homes, done = {}, {}, {}
    started = time.monotonic()
    for name, code in runs.items():
        homes[name] = work / name
        env = dict(os.environ, RAG_HOME=str(homes[name]), PYTHONPATH=code, RAG_DAEMON="off",
                   RAG_MODELS_DIR=str(MODELS_CACHE), ANONYMIZED_TELEMETRY="False")
        procs[name] = subprocess.Popen([sys.executable, "-m", "ragcli.cli", "index", notes, "--json"], env=env,
                                       cwd=code, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while len(done) < len(runs) and time.monotonic() - started < 7200:
        time.sleep(5)
        for name, home in homes.items():
            if name in done or not (home / "index" / "manifest.sqlite").exists():
                continue
            try:
                db = sqlite3.connect(f"file:{home}/index/manifest.sqlite?mode=ro", uri=True, timeout=10)
                found = db.execute("SELECT COUNT(*) FROM files WHERE path = ?", (last,)).fetchone()[0]
                db.close()
            except sqlite3.Error:
                continue
            if found:
                done[name] = time.monotonic() - started
                print(f"{name} ({runs[name]}): the last note's keyword rows in by {done[name]:.0f} s; "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
                procs[name].send_signal(signal.SIGINT)
    for proc in procs.values():
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
    if len(done) == 2:
        print(f"after / before: {done['after'] / done['before']:.2f}")


if __name__ == "__main__":
    main()
