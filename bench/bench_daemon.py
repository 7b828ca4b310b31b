"""`rag search` and `rag ask` through a warm `rag watch` daemon vs cold in process.

Every figure is measured from a NEW process (`python -m ragcli.cli ...`, as a user's shell
runs it), on the same index, in the same run, the two ways interleaved query by query so
that a noisy machine weighs on both alike:
- `python -c pass` and `rag --help`: Python's own start-up (the floor under any command) and
  the Typer CLI's;
- `rag search --json Q` end to end: through the daemon (RAG_DAEMON=require, so a fallback
  would fail loudly) and cold in process (RAG_DAEMON=off): p50, p95, and the ratio;
- `rag ask --quotes Q` and `rag ask Q` on a pseudo-terminal (so they stream): time to the
  first quote on stdout, to the first answer token (after the quotes' blank line) and to
  exit, through the warm daemon (after one warm-up question loads the generator) and cold.
The load average is printed before and after: compare ratios, not absolute times, on a busy machine.

Prints, never asserts. Run (a few minutes on 2 cores; the default vault indexes in seconds),
at normal priority (a niced run measures the other processes, not this one):
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


def ask_on_a_terminal(home: Path, *args: str, **extra) -> tuple[float | None, float | None, float]:
    """(seconds to the first quote on stdout, to the first answer token, to exit) for
    `rag ask ARGS` on a pseudo-terminal. The quotes come first and end with a blank line; what
    follows is the streamed answer (or, with --quotes, the sources). None: not seen (the notes
    did not cover the question)."""
    master, slave = pty.openpty()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ragcli.cli", "ask", *args], stdout=slave,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env(home, **extra))
    os.close(slave)
    first = token = None
    output = b""
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
            now = time.perf_counter() - started
            if first is None and output.strip():
                first = now
            if token is None and first is not None:
                end = output.replace(b"\r", b"").find(b"\n\n")
                if end >= 0 and _visible(output.replace(b"\r", b"")[end + 2:]):
                    token = now
        elif proc.poll() is not None:
            break
    proc.wait()
    os.close(master)
    if proc.returncode != 0:
        sys.exit(f"rag ask failed ({proc.returncode})")
    if NOT_COVERED in output:
        return None, None, time.perf_counter() - started
    return first, token, time.perf_counter() - started


def _visible(data: bytes) -> bool:
    """Bytes that show something on the terminal (not only colour codes and white space)."""
    import re

    return bool(re.sub(rb"\x1b\[[0-9;]*m", b"", data).strip())


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def line(name: str, values: list[float]) -> str:
    return f"{name:<42} p50 {statistics.median(values):6.3f}s   p95 {pct(values, 0.95):6.3f}s   (n={len(values)})"


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


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(home: Path, args) -> None:
    helpvault = "obsidian-help" in str(args.vault)
    searches, questions = (HELP_SEARCHES, HELP_QUESTIONS) if helpvault else (SEARCHES, QUESTIONS)
    print(f"before: {load()}")
    floors = max(5, args.runs // 2)
    python = [python_pass() for _ in range(floors)]
    floor = [rag(home, "--help")[0] for _ in range(floors)]
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
    print(line("python -c pass (Python floor)", python))
    print(line("rag --help (Typer CLI start-up)", floor))
    print(line("rag search, through the daemon", warm))
    print(line("rag search, cold in process", cold))
    print(f"{'cold / daemon (p50)':<42} {statistics.median(cold) / statistics.median(warm):6.1f}x"
          f"   daemon minus python floor (p50): {statistics.median(warm) - statistics.median(python):.3f}s"
          "   [target: daemon p50 <= 0.25 s]")

    ask_on_a_terminal(home, questions[0], RAG_DAEMON="require")  # loads the generator in the daemon
    for label, flags in (("rag ask --quotes", ["--quotes"]), ("rag ask", [])):
        seen = {"daemon": ([], [], []), "cold": ([], [], [])}
        uncovered = {"daemon": 0, "cold": 0}
        for i in range(args.asks):
            question = questions[i % len(questions)]
            for way, mode in (("daemon", "require"), ("cold", "off")):
                first, token, total = ask_on_a_terminal(home, *flags, question, RAG_DAEMON=mode)
                if first is None:
                    uncovered[way] += 1
                else:
                    seen[way][0].append(first)
                    if token is not None and not flags:
                        seen[way][1].append(token)
                seen[way][2].append(total)
        print()
        for way in ("daemon", "cold"):
            where = "through the daemon" if way == "daemon" else "cold in process"
            firsts, tokens, totals = seen[way]
            if firsts:
                print(line(f"{label} first quote, {where}", firsts))
            if tokens:
                print(line(f"{label} first token, {where}", tokens))
            print(line(f"{label} to exit, {where}", totals))
            if uncovered[way]:
                print(f"  ({uncovered[way]} answer(s) said the notes do not cover it: no quote)")
        if seen["daemon"][0] and seen["cold"][0]:
            print(f"{'cold / daemon first quote (p50)':<42} "
                  f"{statistics.median(seen['cold'][0]) / statistics.median(seen['daemon'][0]):6.1f}x"
                  "   [target: first quote or token <= 0.5 s through the daemon]")
    print()
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
