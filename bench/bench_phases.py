"""Two phases of `rag index`: when keyword search is ready, when every vector is in, against
the code before them in the same run.

    git archive main | (mkdir -p /tmp/rag-before && tar -x -C /tmp/rag-before)
    python bench/bench_phases.py --before /tmp/rag-before [--notes 60] [--folder DIR] [--overlap]

Each tree indexes the same notes (the first ``--notes`` Markdown files of the folder, copied
to a temp folder) into a fresh home with an empty vector cache, as ``python -m ragcli.cli
index --json`` with PYTHONPATH at the tree; the two runs alternate (before, after, ...) for
``--rounds``; ``--overlap`` adds a third, this tree with ``RAG_INDEX_OVERLAP=on``. Reported:
the run's total seconds, this tree's ``keyword_seconds`` (phase one committed: every note
found by keyword search), phase two's chunks/s (after phase one: with the overlap, the
vectors made beside it are counted too), and the child's peak RSS. Timings on a shared
machine: read the ratios. Prints, never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT = REPO.parent / "shared" / "corpora" / "obsidian-help" / "en"


def run(tree: Path, notes: Path, home: Path, models: Path, extra: dict | None = None) -> tuple[dict, float, float]:
    if home.exists():
        shutil.rmtree(home)
    env = dict(os.environ, PYTHONPATH=str(tree), RAG_HOME=str(home), RAG_MODELS_DIR=str(models), RAG_DAEMON="off",
               **(extra or {}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "index", str(notes), "--json"], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: rag index failed: {proc.stderr[-800:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # the largest child so far (KiB)
    return json.loads(proc.stdout), seconds, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--folder", type=Path, default=DEFAULT)
    parser.add_argument("--notes", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--overlap", action="store_true",
                        help="a third run each round: this tree with RAG_INDEX_OVERLAP=on (phase two beside phase one)")
    parser.add_argument("--models", type=Path, default=Path(tempfile.gettempdir()) / "ragcli-bench-home" / "models",
                        help="a models folder holding the converted MiniLM (shared by both trees)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-phases-"))
    notes = work / "notes"
    for i, path in enumerate(sorted(args.folder.rglob("*.md"))[: args.notes]):
        target = notes / path.relative_to(args.folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    print(f"{args.notes} notes of {args.folder}; load average {os.getloadavg()[0]:.1f}")
    runs = [("before", args.before.resolve(), {}), ("after", REPO, {})]
    if args.overlap:
        runs.append(("overlap", REPO, {"RAG_INDEX_OVERLAP": "on"}))
    totals: dict[str, list[float]] = {label: [] for label, _t, _e in runs}
    for r in range(args.rounds):
        for label, tree, extra in runs:
            report, seconds, rss = run(tree, notes, work / label, args.models, extra)
            totals[label].append(seconds)
            keyword = report.get("keyword_seconds")
            phase_two = seconds - keyword if keyword else None
            rate = report["embedded"] / phase_two if phase_two else report["embedded"] / seconds
            print(f"round {r + 1} {label:7s}: {seconds:6.1f} s total, keyword search ready at "
                  f"{f'{keyword:.1f} s' if keyword else '(the end: one phase)'}, {report['chunks_added']} chunks, "
                  f"{report['embedded']} embedded ({rate:.1f} chunks/s {'in phase two' if keyword else 'overall'}), "
                  f"peak RSS {rss:.0f} MiB, load {os.getloadavg()[0]:.1f}", flush=True)
    b = min(totals["before"])
    for label in list(totals)[1:]:
        print(f"total time {label}/before: {min(totals[label]) / b:.2f} (best of {args.rounds})")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
