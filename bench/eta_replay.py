"""How truthful is the progress bar's time left? Replayed on a finished index.

    python bench/eta_replay.py INDEX_DIR/manifest.sqlite     # e.g. a bench_scale --keep home

Each file's row holds when it was parsed (``indexed_at``) and its size. At every 5% of the
files, the time left is estimated as rich's bar does (what is left over the speed of the last
30 s), once counting files and once counting bytes, and compared with the time the run really
took from there. Prints the table and the median and worst error of each; asserts nothing.
"""

from __future__ import annotations

import bisect
import sqlite3
import sys

WINDOW_S = 30.0  # rich.progress's speed_estimate_period


def main() -> None:
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    rows = sorted(db.execute("SELECT indexed_at, size FROM files").fetchall())
    db.close()
    start = rows[0][0]
    times = [t - start for t, _ in rows]
    cumulative, total = [], 0
    for _, size in rows:
        total += size
        cumulative.append(total)
    n, took = len(rows), times[-1]

    def estimate(i: int, unit: str) -> float:
        j = bisect.bisect_left(times, times[i] - WINDOW_S)
        done, before, whole = (i + 1, j + 1, n) if unit == "files" else (cumulative[i], cumulative[j], total)
        speed = (done - before) / max(times[i] - times[j], 1e-9)
        return (whole - done) / speed if speed else float("inf")

    print(f"{n} files, {total / 2**20:.1f} MB, {took / 60:.1f} min")
    print("files done  really left   counted in files (error)   counted in bytes (error)")
    errors: dict[str, list[float]] = {"files": [], "bytes": []}
    for step in range(1, 20):
        i = step * n // 20 - 1
        left = took - times[i]
        line = f"{step * 5:9d}%  {left / 60:8.1f} min"
        for unit in ("files", "bytes"):
            guess = estimate(i, unit)
            error = (guess - left) / left
            errors[unit].append(abs(error))
            line += f"   {guess / 60:12.1f} min ({error:+5.0%})"
        print(line)
    for unit, errs in errors.items():
        print(f"counted in {unit}: median |error| {sorted(errs)[len(errs) // 2]:.0%}, worst {max(errs):.0%}")


if __name__ == "__main__":
    main()
