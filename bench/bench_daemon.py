"""`rag search` and `rag ask` through a warm `rag watch` daemon vs cold in process.

Every figure is measured from a NEW process (`python -m ragcli.cli ...`, as a user's shell
runs it), on the same index, in the same run, the two ways interleaved query by query so
that a noisy machine weighs on both alike:
- `rag search --json Q` end to end: through the daemon (RAG_DAEMON=require, so a fallback
  would fail loudly) and cold in process (RAG_DAEMON=off): p50, p95, and the ratio;
- `rag --help`: the CLI's own start-up, the floor under any command;
- `rag ask Q` time to the first token on stdout (a pseudo-terminal, so it streams) and to
  exit: through the warm daemon (after one warm-up question loads the generator) and cold.

Prints, never asserts. Run (a few minutes on 2 cores; the default vault indexes in seconds):
    .venv/bin/python bench/bench_daemon.py [VAULT] [--runs 20] [--asks 3] [--home DIR]
e.g. with ../shared/corpora/obsidian-help/en as VAULT (173 notes; indexing takes minutes:
``--home DIR`` keeps that index for the next run).
The converted embedding model is cached in $RAG_BENCH_MODELS (default ~/.cache/ragcli-bench/models).
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = ROOT / "examples" / "vault"
MODELS_CACHE = Path(os.environ.get("RAG_BENCH_MODELS", Path.home() / ".cache" / "ragcli-bench" / "models"))
SEARCHES = ["how long should a pour over take", "drip irrigation pressure", "sourdough starter",
            "espresso dose and yield", "what to see in Lisbon", "dense passage retriever",
            "coffee grinder setting", "python packaging wheel", "git tricks rebase", "moka pot"]
QUESTIONS = ["How long should a pour over take?", "What pressure should the drip irrigation run at?",
             "What is the coffee to water ratio for pour over?", "What is dense passage retrieval?"]
# Used when the vault is the Obsidian help (../shared/corpora/obsidian-help/en).
HELP_SEARCHES = ["link to a heading", "create a new vault", "sync across devices", "embed an image",
                 "daily notes template", "canvas cards", "graph view filters", "publish a site",
                 "command palette shortcut", "moka pot"]
HELP_QUESTIONS = ["How do I link to a heading in another note?", "How do I create a new vault?",
                  "How do I embed an image in a note?", "What is the graph view?"]
NOT_COVERED = b"don't seem to cover"


def env(home: Path, **extra) -> dict:
    e = dict(os.environ)
    e.update(RAG_HOME=str(home), RAG_MODELS_DIR=str(MODELS_CACHE), ANONYMIZED_TELEMETRY="False",
             PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), e.get("PYTHONPATH")])))
    e.pop("RAG_DAEMON", None)
    e.update(extra)
    return e


def rag(home: Path, *args: str, check: bool = True, **extra) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", *args], capture_output=True, text=True,
                          env=env(home, **extra), timeout=900)
    seconds = time.perf_counter() - started
    if check and proc.returncode != 0:
        sys.exit(f"rag {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, proc


def ask_on_a_terminal(home: Path, question: str, **extra) -> tuple[float | None, float]:
    """(seconds to the first byte on stdout, seconds to exit) for `rag ask` on a pseudo-terminal;
    no first byte (None) when the notes did not cover the question (nothing was streamed)."""
    master, slave = pty.openpty()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ragcli.cli", "ask", question], stdout=slave,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env(home, **extra))
    os.close(slave)
    first, output = None, b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            output += data
            if first is None and data.strip():
                first = time.perf_counter() - started
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(master)
    if proc.returncode != 0:
        sys.exit(f"rag ask failed ({proc.returncode})")
    return (None if NOT_COVERED in output else first), time.perf_counter() - started


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def line(name: str, values: list[float]) -> str:
    return f"{name:<34} p50 {statistics.median(values):6.3f}s   p95 {pct(values, 0.95):6.3f}s   (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", nargs="?", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--runs", type=int, default=20, help="searches each way")
    parser.add_argument("--asks", type=int, default=3, help="questions each way (after one warm-up)")
    parser.add_argument("--home", type=Path, help="reuse this RAG_HOME (brought up to date, kept) "
                        "instead of indexing into a temporary one")
    args = parser.parse_args()
    MODELS_CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rag-bench-daemon-") as tmp:
        home = args.home or Path(tmp)
        seconds, _ = rag(home, "index", str(args.vault))
        print(f"vault: {args.vault} (indexed in {seconds:.1f}s)")
        started, proc = rag(home, "watch", "--detach", "--json")
        print(f"rag watch --detach returned in {started:.2f}s (pid {json.loads(proc.stdout)['pid']})")
        try:
            deadline = time.monotonic() + 600
            while True:
                _s, st = rag(home, "watch", "--status", "--json")
                if json.loads(st.stdout).get("serving") == "ready":
                    break
                if time.monotonic() > deadline:
                    sys.exit("the daemon did not get ready")
                time.sleep(0.5)
            run(home, args)
        finally:
            stopped, proc = rag(home, "watch", "--stop", "--json", check=False)
            print(f"rag watch --stop: {stopped:.2f}s, {proc.stdout.strip() or proc.stderr.strip()}")


def run(home: Path, args) -> None:
    helpvault = "obsidian-help" in str(args.vault)
    searches, questions = (HELP_SEARCHES, HELP_QUESTIONS) if helpvault else (SEARCHES, QUESTIONS)
    floor = [rag(home, "--help")[0] for _ in range(max(3, args.runs // 4))]
    warm, cold, differ = [], [], []
    for i in range(args.runs):
        query = searches[i % len(searches)]
        t_warm, p_warm = rag(home, "search", "--json", query, RAG_DAEMON="require")
        t_cold, p_cold = rag(home, "search", "--json", query, RAG_DAEMON="off")
        if json.loads(p_warm.stdout)["results"] != json.loads(p_cold.stdout)["results"]:
            differ.append(query)
        warm.append(t_warm)
        cold.append(t_cold)
    if differ:  # two cold runs can differ too on a large index: Chroma's HNSW is approximate
        print(f"results differed daemon vs cold for {len(differ)} of {args.runs}: {sorted(set(differ))}")
    print()
    print(line("rag --help (CLI start-up floor)", floor))
    print(line("rag search, through the daemon", warm))
    print(line("rag search, cold in process", cold))
    print(f"{'cold / daemon (p50)':<34} {statistics.median(cold) / statistics.median(warm):6.1f}x"
          f"   daemon minus floor (p50): {statistics.median(warm) - statistics.median(floor):.3f}s"
          "   [target: daemon p50 <= 0.25 s]")

    ask_on_a_terminal(home, questions[0], RAG_DAEMON="require")  # loads the generator in the daemon
    firsts = {"daemon": [], "cold": []}
    totals = {"daemon": [], "cold": []}
    for i in range(args.asks):
        question = questions[i % len(questions)]
        for way, mode in (("daemon", "require"), ("cold", "off")):
            first, total = ask_on_a_terminal(home, question, RAG_DAEMON=mode)
            if first is not None:
                firsts[way].append(first)
            totals[way].append(total)
    print()
    for way in ("daemon", "cold"):
        label = "warm daemon" if way == "daemon" else "cold in process"
        if firsts[way]:
            print(line(f"rag ask first token, {label}", firsts[way]))
        if len(firsts[way]) < len(totals[way]):
            print(f"  ({len(totals[way]) - len(firsts[way])} answer(s) said the notes do not cover it: no token)")
        print(line(f"rag ask to exit, {label}", totals[way]))
    if firsts["daemon"] and firsts["cold"]:
        print(f"{'cold / daemon first token (p50)':<34} "
              f"{statistics.median(firsts['cold']) / statistics.median(firsts['daemon']):6.1f}x"
              "   [target: first quote <= 0.5 s once quotes land; today: first token]")


if __name__ == "__main__":
    main()
