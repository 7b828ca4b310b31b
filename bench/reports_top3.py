"""Issue 20's "key figures shown ... above the top-3 hits alone": the share of each report
question's key figures (``facts``, as bench_answers2 scores them: case-insensitive, verbatim)
in the full text of `rag search`'s top 3 passages, by half (odd ids tune, even check).
Compare with bench_answers2's ``facts`` for `rag ask` on the same index.

    python bench/reports_top3.py HOME   # HOME: the reports' RAG_HOME (bench_answers2's HOMES/shared/reports)

Prints, never asserts.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> None:
    os.environ["RAG_HOME"] = sys.argv[1]
    os.environ.setdefault("RAG_DAEMON", "off")
    import ragcli

    rows = [json.loads(line) for line in (REPO / "bench" / "questions" / "reports.jsonl").open()]
    halves: dict[str, list[float]] = {"tune": [], "check": []}
    with ragcli.Notes() as notes:
        for row in rows:
            hits = notes.search(row["question"], k=3)
            text = " ".join(h.chunk.text for h in hits).lower()
            share = sum(f.lower() in text for f in row["facts"]) / len(row["facts"])
            halves["tune" if int(row["id"].split("-")[1]) % 2 else "check"].append(share)
    for name, values in halves.items():
        print(f"{name}: key figures in the top-3 passages {statistics.mean(values):.3f} ({len(values)} questions)")
    print(f"all: {statistics.mean(halves['tune'] + halves['check']):.3f}")


if __name__ == "__main__":
    main()
