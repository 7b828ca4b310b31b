"""Phase one of `rag index` alone (parse, chunk, keyword rows; no vectors), two code trees
alternating on the same notes, each into a fresh home: wall seconds and CPU seconds (the
process and the parse workers it reaped), with the load average at the start.

    python bench/phase_one_ab.py NOTES BEFORE_TREE AFTER_TREE [--rounds 3]

A tree is a checkout (``git archive REV | tar -x -C DIR``); each run is
``python bench/phase_one_ab.py --run NOTES`` with PYTHONPATH at the tree, which runs
``Indexer.run`` with phase two left out. CPU time is the figure to trust on a shared
machine; wall time follows the load. Prints, never asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import MODELS_CACHE


def run_phase_one(notes: Path) -> None:
    """In this process: phase one of an index of ``notes`` into RAG_HOME; one line of figures."""
    from ragcli.native import llama_first

    llama_first()
    from ragcli.config import load_config
    from ragcli.pipeline.indexing import Indexer

    started, before = time.monotonic(), os.times()
    with Indexer(load_config()) as indexer:
        indexer.embed_pending = lambda report=None: 0  # phase two is not measured here
        report = indexer.run([notes])
    after = os.times()
    own = after.user - before.user + after.system - before.system
    workers = (after.children_user - before.children_user + after.children_system - before.children_system)
    print(f"wall {time.monotonic() - started:.1f} s  cpu {own:.1f} s + workers {workers:.1f} s = "
          f"{own + workers:.1f} s  chunks {report.chunks_added}  files {report.files_indexed}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notes", type=Path)
    parser.add_argument("trees", type=Path, nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--run", action="store_true", help="one run in this process (PYTHONPATH = the tree)")
    args = parser.parse_args()
    if args.run:
        return run_phase_one(args.notes.resolve())
    for round_no in range(1, args.rounds + 1):
        for tree in args.trees:
            home = Path(tempfile.mkdtemp(prefix="phase-one-"))
            env = dict(os.environ, RAG_HOME=str(home), RAG_MODELS_DIR=str(MODELS_CACHE), RAG_DAEMON="off",
                       PYTHONPATH=os.pathsep.join(filter(None, [str(tree.resolve()), os.environ.get("PYTHONPATH")])),
                       ANONYMIZED_TELEMETRY="False")
            print(f"round {round_no} {tree} (load {os.getloadavg()[0]:.1f}): ", end="", flush=True)
            subprocess.run([sys.executable, str(Path(__file__).resolve()), "--run", str(args.notes)], env=env,
                           cwd=tempfile.gettempdir(), check=False)
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
