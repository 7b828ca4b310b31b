"""MDN-sized figures without embedding MDN: a replica of already-indexed notes, N copies over.

    python bench/bench_scale.py --limit 600 --keep WORK --skip interrupt   # embeds once
    python bench/scale_replica.py WORK --copies 23 [--phases first,again,search,verify,watch]

A full first index of MDN (14,235 notes, ~75k chunks) takes hours of embedding on the 2-core
machine (~5-15 chunks/s). Everything else at that size (discovery of 14k files, the plan, the
manifest, FTS5 and Chroma at tens of thousands of chunks, verify, the watcher's start-up
reconcile, search latency) does not depend on what the vectors are. So the notes of a
bench_scale ``--keep`` folder are copied ``--copies`` times (WORK/replica/notes/copy-NN/...,
one folder per note as in MDN), a fresh home gets the vector cache of WORK/home, and the
replica is indexed through the real CLI: every chunk's vector comes from the cache (nothing
is embedded), so the first index measures the pipeline without the model. Then the
bench_scale phases run on it. Differences from real MDN, said plainly: chunk texts repeat
(so hit@5 means nothing here: copies crowd each other out, and it is not printed), and the
vector cache holds one row per distinct text. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
from pathlib import Path

import bench_scale as b
from benchlib import rag, rag_env


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", type=Path, help="a bench_scale --keep folder (notes/ and home/ indexed)")
    ap.add_argument("--copies", type=int, default=23, help="copies of the notes (23 x 615 notes = 14,145)")
    ap.add_argument("--phases", default="first,again,search,verify,watch")
    opts = ap.parse_args()
    phases = set(opts.phases.split(","))
    source_db = opts.work / "home" / "index" / "manifest.sqlite"
    if not source_db.exists():
        sys.exit(f"no index under {opts.work / 'home'}: run bench_scale.py --keep {opts.work} first")
    replica = opts.work / "replica"
    notes = replica / "notes"
    db = sqlite3.connect(f"file:{source_db}?mode=ro", uri=True)
    indexed = sorted(str(Path(p).relative_to(opts.work / "notes")) for (p,) in db.execute("SELECT path FROM files"))
    db.close()
    if "first" in phases:
        shutil.rmtree(replica, ignore_errors=True)
        for n in range(opts.copies):
            dest = notes if n == 0 else notes / f"copy-{n:02d}"
            for rel in indexed:
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(opts.work / "notes" / rel, dest / rel)
        empty = replica / "empty"
        empty.mkdir()
        rag(["index", str(empty), "--json"], rag_env(replica / "home"))  # creates the index
        db = sqlite3.connect(replica / "home" / "index" / "manifest.sqlite")
        db.execute("ATTACH ? AS source", (str(source_db),))
        db.execute("INSERT OR IGNORE INTO vectors SELECT * FROM source.vectors")
        db.commit()
        db.close()
        print(f"{len(indexed)} indexed notes x {opts.copies} = {len(indexed) * opts.copies} files under {notes}",
              flush=True)
        b.index_run(notes, replica / "home", f"replica first index ({opts.copies} copies, vectors cached)")
    if "again" in phases:
        b.phase_again(notes, replica, indexed[0])
    if "search" in phases:
        b.phase_search(replica, indexed, 100, hits=False)
    if "verify" in phases:
        b.phase_verify(replica)
    if "watch" in phases:
        b.phase_watch(replica)


if __name__ == "__main__":
    main()
