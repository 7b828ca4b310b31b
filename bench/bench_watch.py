"""`rag watch` figures on a copy of a vault (default: ../shared/corpora/obsidian-help/en).

Prints, never asserts:
- the start-up reconcile on an unchanged vault (the pipeline's own time, and spawn-to-ready
  wall time of the daemon process, which includes Python, imports and the model load);
- CPU used by the idle daemon (and its children) over ``--idle`` seconds, from /proc/PID/stat;
- lag from save to searchable over ``--edits`` edits (median, p95, max): each edit is an
  atomic save (temp file + rename) of a real note with one new word, timed until a
  long-lived reader in this process finds that note by the word. The manifest commit that
  makes the word findable comes after the Chroma write, so the vectors are there too;
- the time SIGTERM takes to end the daemon.

Run:
    .venv/bin/python bench/bench_watch.py [VAULT] [--edits 50] [--idle 30] [--debounce 1] [--prefill both]
The converted embedding model is cached in $RAG_BENCH_MODELS (default ~/.cache/ragcli-bench/models).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT.parent / "shared" / "corpora" / "obsidian-help" / "en"
MODELS_CACHE = Path(os.environ.get("RAG_BENCH_MODELS", Path.home() / ".cache" / "ragcli-bench" / "models"))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads) and of its live child processes."""
    total = 0.0
    for p in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / TICKS  # fields 14 and 15 of stat(5)
    return total


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found + [g for c in found for g in children(c)]


def wait_state(state_path: Path, proc: subprocess.Popen, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the watcher exited with {proc.returncode}")
        try:
            st = json.loads(state_path.read_text())
            if st.get("state") == "watching" and st.get("syncs", 0) >= 1:
                return st
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    sys.exit("the watcher did not become ready")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", nargs="?", type=Path, default=DEFAULT_VAULT)
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--idle", type=float, default=30.0)
    ap.add_argument("--debounce", type=float, default=None, help="default: the configured 1 s")
    ap.add_argument("--polling", action="store_true", help="measure the polling observer instead")
    ap.add_argument("--prefill", choices=("default", "on", "off", "both"), default="default",
                    help="the watcher's passage pre-fill; both: off, then on, on the same index")
    args = ap.parse_args()
    if not args.vault.is_dir():
        sys.exit(f"{args.vault}: no such vault")

    work = Path(tempfile.mkdtemp(prefix="bench-watch-"))
    vault, home = work / "vault", work / "home"
    shutil.copytree(args.vault, vault)
    home.mkdir()
    MODELS_CACHE.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, RAG_HOME=str(home), RAG_MODELS_DIR=str(MODELS_CACHE), ANONYMIZED_TELEMETRY="False",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    os.environ.update({k: env[k] for k in ("RAG_HOME", "RAG_MODELS_DIR", "ANONYMIZED_TELEMETRY")})
    notes = sorted(p for p in vault.rglob("*.md") if not any(x.startswith(".") for x in p.relative_to(vault).parts))
    print(f"vault: {args.vault} ({len(notes)} notes), copy in {work}")

    t = time.perf_counter()
    built = subprocess.run([sys.executable, "-m", "ragcli.cli", "index", str(vault), "--json"], env=env,
                           capture_output=True, text=True, cwd=ROOT)
    if built.returncode:
        sys.exit(built.stderr)
    report = json.loads(built.stdout)
    print(f"initial rag index: {report['files_indexed']} files, {report['chunks_added']} chunks "
          f"in {time.perf_counter() - t:.1f}s (not the watcher: for scale)")

    for prefill in (("off", "on") if args.prefill == "both" else (args.prefill,)):
        if args.prefill != "default":
            print(f"--- watcher with the passage pre-fill {prefill} (watch/prefill.py)")
        run_watcher(args, vault, notes, home, env, work, prefill)
    shutil.rmtree(work, ignore_errors=True)


def run_watcher(args, vault: Path, notes: list[Path], home: Path, env: dict, work: Path, prefill: str) -> None:
    argv = [sys.executable, "-m", "ragcli.cli", "watch", str(vault)]
    if args.debounce is not None:
        argv += ["--debounce", str(args.debounce)]
    if args.polling:
        argv.append("--polling")
    if prefill == "off":
        argv.append("--no-prefill")
    log_path = work / f"watch-{prefill}.log"
    with open(log_path, "w") as log:
        spawned = time.perf_counter()
        proc = subprocess.Popen(argv, stderr=log, stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
        try:
            state = wait_state(home / "index" / "watch.json", proc, 300)
            ready = time.perf_counter() - spawned
            line = next(x for x in log_path.read_text().splitlines() if "start-up reconcile:" in x)
            seconds = float(re.search(r"\(([\d.]+)s\)", line).group(1))
            print(f"start-up reconcile, unchanged vault: {seconds:.3f}s in the pipeline; "
                  f"{ready:.2f}s from spawn to ready (imports, lock, observer, model load)  [{line.split(': ', 1)[1]}]")
            print(f"observer: {state['observer']}, debounce {state['debounce']:g}s")

            time.sleep(3)  # let start-up settle
            c0, w0 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(args.idle)
            used, span = cpu_seconds(proc.pid) - c0, time.monotonic() - w0
            print(f"idle CPU: {used:.2f} CPU-s over {span:.0f}s = {100 * used / span:.2f}% of one core "
                  f"(daemon + children, /proc/PID/stat)")

            lags = edit_lags(vault, notes, args.edits, tag=prefill)
            passages = (json.loads((home / "index" / "watch.json").read_text()) or {}).get("passages")
            if passages:
                print(f"pre-fill after the edits: {passages}")
            print(f"save-to-searchable lag over {len(lags)} atomic saves: median {statistics.median(lags):.2f}s, "
                  f"p95 {pct(lags, 0.95):.2f}s, min {min(lags):.2f}s, max {max(lags):.2f}s")

            c1, w1 = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(min(10.0, args.idle))
            used, span = cpu_seconds(proc.pid) - c1, time.monotonic() - w1
            print(f"idle CPU after the edits (embedder loaded): {100 * used / span:.2f}% over {span:.0f}s")

            t = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
            print(f"SIGTERM to exit: {time.perf_counter() - t:.2f}s (exit {code})")
        finally:
            if proc.poll() is None:
                proc.kill()


def edit_lags(vault: Path, notes: list[Path], edits: int, tag: str = "") -> list[float]:
    """Save-to-searchable seconds; ``tag`` keeps one run's probe words apart from an earlier
    run's on the same copy."""
    from ragcli.config import load_config
    from ragcli.retrieve import Searcher

    searcher = Searcher(load_config())
    rng = random.Random(7)  # the same notes in each run
    spell = random.Random(f"probe {tag}")  # other words: a search's respelling would find a close one
    lags = []
    try:
        for i in range(edits):
            note = rng.choice(notes)
            word = "lagprobe" + "".join(spell.choice("bcdfghjklmnpqrstvwxz") for _ in range(8))
            text = note.read_text(encoding="utf-8", errors="replace") + f"\n\nEdit {i}: {word}\n"
            tmp = note.with_name(note.name + ".tmp")
            tmp.write_text(text, encoding="utf-8")
            saved = time.perf_counter()
            os.replace(tmp, note)
            deadline = saved + 60
            while time.perf_counter() < deadline:
                if any(h.chunk.path == str(note) for h in searcher.search(word, k=5, mode="keyword")):
                    lags.append(time.perf_counter() - saved)
                    break
                time.sleep(0.02)
            else:
                print(f"edit {i}: {note.name} not searchable after 60s", file=sys.stderr)
            time.sleep(0.3)
    finally:
        searcher.close()
    return lags


if __name__ == "__main__":
    main()
