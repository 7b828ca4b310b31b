"""Do two checkouts print the same answers? Reads bench_answers2.py --json runs (baseline and
this checkout), lists the questions whose stdout or quotes differ, and prints first-quote p50
and p90 per question prefix (ht-, mp-, oh-, ex-, un-).

    python bench/same_answers.py /tmp/fq8-run1.json /tmp/fq8.json
"""

from __future__ import annotations

import json
import statistics
import sys


def main(paths: list[str]) -> None:
    for path in paths:
        runs = json.load(open(path, encoding="utf-8"))["runs"]
        base, mine = (runs[label]["records"] for label in runs)
        differ = [q for q in base if (base[q]["stdout"], base[q]["quotes"]) != (mine[q]["stdout"], mine[q]["quotes"])]
        print(f"{path}: {len(base)} questions, differing stdout or quotes: {differ}")
        for label, run in runs.items():
            records = run["records"]
            for prefix in sorted({q.split("-")[0] for q in records}):
                times = sorted(r["first_quote_s"] for q, r in records.items()
                               if q.split("-")[0] == prefix and r["first_quote_s"] is not None)
                if times:
                    print(f"  {label:24} {prefix:3} n={len(times):3} first quote p50 {statistics.median(times):.3f}"
                          f" p90 {times[int(0.9 * len(times))]:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
