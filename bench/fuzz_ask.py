"""Ask as users do, at every -k and mode, and report what breaks: errors, and questions slower
than --slow seconds. Not a quality figure: a question that crashes or hangs is a defect whatever
the answer would have been.

    python bench/fuzz_ask.py --home /tmp/rb17/shared/reports [--k 1 10 20] [--modes hybrid keyword vector]

Questions: every question of bench/questions (the sets say which corpus; all are asked of any
home) and inputs no question set has (empty, one character, 3,000 characters, FTS5 syntax, a line
of figures). Each is asked quotes only through ``ragcli.Notes`` (every door's path) and searched;
a question that takes over 120 s ends the run with the traceback of where it stood.

Session 23 (at 1690361): over the three bench homes at -k 1, 10 and 20 in each mode, 229 to
434 questions each: no error but the empty question (now a usage error) and no question over 5 s
on a loaded machine; at -k 7 over the reports, 509 asked, slowest 4.64 s at load 4.7 (before cb547df
it hung in the register-entry pattern).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ODD = ["", "?", "a" * 3000, "how " * 300, "émoji 💥 ünïcode ???", "-k 5", "'; DROP TABLE chunks; --",
       '"unbalanced', "NEAR(a b)", "AND OR NOT", "* ^ $ ( [ {", "1,2,3,4,5,6,7,8,9,10 " * 40,
       " ".join(["6,357", "5,713", "50,250", "50,300"] * 8)]


def questions() -> list[str]:
    asked = []
    for path in sorted((ROOT / "bench" / "questions").glob("*.jsonl")):
        asked += [json.loads(line).get("question", "") for line in path.open() if line.strip()]
    return [q for q in asked if q] + ODD


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True, help="a RAG_HOME with an index")
    ap.add_argument("--k", type=int, nargs="+", default=[1, 10, 20])
    ap.add_argument("--modes", nargs="+", default=["hybrid", "keyword", "vector"])
    ap.add_argument("--slow", type=float, default=5.0)
    args = ap.parse_args()
    os.environ["RAG_HOME"] = args.home
    os.environ["RAG_DAEMON"] = "off"
    from ragcli import Notes
    from ragcli.errors import UsageError

    asked = questions()
    with Notes() as notes:
        for k in args.k:
            for mode in args.modes:
                errors, slow, worst = 0, 0, 0.0
                for question in asked:
                    faulthandler.dump_traceback_later(120, exit=True)
                    started = time.perf_counter()
                    try:
                        notes.ask(question, k=k, mode=mode, quotes_only=True)
                        notes.search(question, k=k, mode=mode)
                    except UsageError:
                        pass  # the empty question: refused on purpose
                    except Exception as exc:  # noqa: BLE001 - what this script is for
                        errors += 1
                        print(f"ERROR k={k} {mode}: {type(exc).__name__}: {exc} | {question[:80]!r}", flush=True)
                    took = time.perf_counter() - started
                    worst = max(worst, took)
                    if took > args.slow:
                        slow += 1
                        print(f"SLOW {took:.1f}s k={k} {mode} | {question[:80]!r}", flush=True)
                faulthandler.cancel_dump_traceback_later()
                print(f"k={k} {mode}: {len(asked)} asked, {errors} errors, {slow} over {args.slow:g}s, "
                      f"slowest {worst:.2f}s (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
