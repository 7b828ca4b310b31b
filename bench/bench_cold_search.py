"""Cold start of a one-off `rag search` (a new process, no watcher): p50/p95 of two code trees,
runs interleaved so a busy machine hurts both alike.

    git archive main | (mkdir -p /tmp/rag-before && tar -x -C /tmp/rag-before)
    RAG_HOME=<a home with an index> python bench/bench_cold_search.py --before /tmp/rag-before [--runs 15]

Each run is ``python -m ragcli.cli search QUERY`` with PYTHONPATH at one tree (this checkout,
or ``--before``), RAG_DAEMON=off, from a neutral folder, timed from spawn to exit. The index
must already exist in RAG_HOME (e.g. the Obsidian help vault: ``rag index`` it once). Prints
figures and the after/before ratio; never asserts.

Both trees run with their bytecode cached (``PYTHONPYCACHEPREFIX`` in a temp folder, filled by
an untimed first run): an installed ragcli has its .pyc files, while a checkout under
``PYTHONDONTWRITEBYTECODE=1`` recompiles ~40 modules on every run (~0.09 s here). Before the
timing, each query's output (text and ``--json``) from the two trees is compared: a speed-up
must not change which hits come back, in which order, with which scores.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERIES = ["how do I create a canvas", "sync notes between devices", "what is a wikilink",
           "keyboard shortcuts for the command palette", "embed a pdf in a note"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


PYCACHE = tempfile.mkdtemp(prefix="rag-cold-pycache-")


def search(tree: Path, query: str, mode: str, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), RAG_DAEMON="off", PYTHONPYCACHEPREFIX=PYCACHE)
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "search", query, "--mode", mode, *extra],
                          env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: rag search failed ({proc.returncode}): {proc.stderr[-500:]}")
    return proc


def one(tree: Path, query: str, mode: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of one cold search. The CPU time is what an
    idle machine's wall time comes near, when a busy one stretches the wall."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    search(tree, query, mode)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def same_results(trees: dict[str, Path], mode: str) -> int:
    """The queries whose output (text, then JSON) differs between the trees, printed; their count."""
    differ = 0
    for query in QUERIES:
        for extra in ((), ("--json",)):
            outputs = {label: search(tree, query, mode, *extra).stdout for label, tree in trees.items()}
            if len(set(outputs.values())) > 1:
                differ += 1
                print(f"DIFFERENT output for {query!r} {' '.join(extra)}:")
                for label, text in outputs.items():
                    print(f"--- {label}\n{text}")
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the code to compare with")
    parser.add_argument("--after", type=Path, default=REPO, help="the code to measure (default: this checkout)")
    parser.add_argument("--runs", type=int, default=15, help="runs per tree")
    parser.add_argument("--mode", default="hybrid")
    args = parser.parse_args()
    if not os.environ.get("RAG_HOME"):
        raise SystemExit("set RAG_HOME to a home with an index (e.g. of the Obsidian help vault)")
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    for label, tree in trees.items():  # one untimed run each: the page cache, the .pyc files
        one(tree, QUERIES[0], args.mode)
    differ = same_results(trees, args.mode)
    print(f"results: {'the same' if not differ else f'{differ} DIFFERENT'} for {len(QUERIES)} queries "
          "(text and --json)")
    times: dict[str, list[float]] = {label: [] for label in trees}
    cpu: dict[str, list[float]] = {label: [] for label in trees}
    for r in range(args.runs):
        for label, tree in (trees.items() if r % 2 == 0 else reversed(list(trees.items()))):
            wall, used = one(tree, QUERIES[r % len(QUERIES)], args.mode)
            times[label].append(wall)
            cpu[label].append(used)
    print(f"cold `rag search --mode {args.mode}`, {args.runs} runs per tree, interleaved; "
          f"load average {os.getloadavg()[0]:.1f}, cpu_count {os.cpu_count()}")
    for label, values in times.items():
        print(f"{label:7s} p50 {percentile(values, 50):6.3f} s   p95 {percentile(values, 95):6.3f} s   "
              f"mean {statistics.mean(values):6.3f} s   CPU p50 {percentile(cpu[label], 50):6.3f} s")
    b, a = percentile(times["before"], 50), percentile(times["after"], 50)
    print(f"after/before p50 ratio {a / b:.2f}, p95 ratio "
          f"{percentile(times['after'], 95) / percentile(times['before'], 95):.2f}")


if __name__ == "__main__":
    main()
