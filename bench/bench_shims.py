"""Does each start-up shim pay its way? Wall time of the commands a user runs, with the shim
and without, runs interleaved so that a loaded machine weighs on both alike (issue 22).

    python bench/bench_shims.py [--runs 7] [--only LABEL-PREFIX ...]

Uses a fresh RAG_HOME with examples/vault indexed and a detached watcher. "Without" needs
no change to the code:
- fast path (``ragcli.fast``): ``-k5`` is a form it leaves to the Typer app;
- the ``os._exit`` teardown skip: ``main(argv)`` given its arguments returns instead.
Gone since, as they did not pay their way (issue 22): ``render.PlainConsole`` (0.07 s through
the watcher), ``render._plain``, which wrote `rag search`'s hits into a pipe without importing
rich (0.036 s through the watcher, 0.118 against 0.154 s, 9 pairs at load 2.6, measured with
``TTY_COMPATIBLE=1`` having rich draw them), the vector store in a child process (it cost
0.58 s on one edited note), and
``sys.setswitchinterval`` while ``OpenAhead`` imported chromadb (`rag index` of one edited
note: +0.46, -0.17, -0.16 s in three runs of 5, 7 and 9 pairs: noise, on a loaded machine).
Prints medians in seconds, and the load average while it ran.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
RAG = [PY, "-m", "ragcli.cli"]
NO_EXIT_SKIP = [PY, "-c", "import sys; from ragcli.cli import main; sys.exit(main(sys.argv[1:]))"]
ONLY: list[str] = []


def timed(cmd: list[str], env: dict) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode()[-2000:]}")
    return elapsed


def compare(label: str, with_: tuple, without: tuple, runs: int) -> None:
    if ONLY and not label.startswith(tuple(ONLY)):
        return
    a, b = [], []
    for _ in range(runs):
        a.append(timed(*with_))
        b.append(timed(*without))
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"| {label} | {ma:.3f} | {mb:.3f} | {mb - ma:+.3f} | {os.getloadavg()[0]:.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", nargs="*", default=[], help="the rows whose label starts so")
    args = parser.parse_args()
    runs = args.runs
    ONLY[:] = args.only
    home = Path(tempfile.mkdtemp(prefix="rag-shims-"))
    vault = home / "vault"
    subprocess.run(["cp", "-r", str(ROOT / "examples" / "vault"), str(vault)], check=True)
    env = {**os.environ, "RAG_HOME": str(home / "home")}
    subprocess.run(RAG + ["index", str(vault)], env=env, check=True, capture_output=True)
    warm = {**env, "RAG_DAEMON": "require"}
    cold = {**env, "RAG_DAEMON": "off"}
    print("| command | with (s) | without (s) | without - with | load |")
    print("|---|---|---|---|---|")
    subprocess.run(RAG + ["watch", "--detach", str(vault)], env=env, check=True, capture_output=True)
    try:
        for _ in range(600):
            if subprocess.run(RAG + ["search", "espresso"], env=warm, capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        compare("fast path: rag search, through the watcher", (RAG + ["search", "-k", "5", "espresso"], warm),
                (RAG + ["search", "-k5", "espresso"], warm), runs)
    finally:
        subprocess.run(RAG + ["watch", "--stop"], env=env, capture_output=True)
    compare("fast path: rag search, in process", (RAG + ["search", "-k", "5", "espresso"], cold),
            (RAG + ["search", "-k5", "espresso"], cold), runs)
    compare("os._exit: rag search, in process", (RAG + ["search", "espresso"], cold),
            (NO_EXIT_SKIP + ["search", "espresso"], cold), runs)
    compare("os._exit: rag ask --quotes, in process", (RAG + ["ask", "--quotes", "espresso ratio?"], cold),
            (NO_EXIT_SKIP + ["ask", "--quotes", "espresso ratio?"], cold), runs)


if __name__ == "__main__":
    main()
