"""Fill an index's passage-vector cache (ragcli/store/passages.py) with every chunk's
evidence units and section heading, as a watcher could in idle time, and say what it cost.

    RAG_HOME=/tmp/rb8-fq-pre/shared/obsidian-help python bench/prefill_passages.py

bench/ISSUE19.md (session 8, fq8) then runs bench_answers2.py on that home: new questions
with a pre-filled cache. It prints chunks, passages, seconds and the cache's size.
"""

from __future__ import annotations

import os
import sqlite3
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ragcli.native import llama_first  # llama.cpp loads before numpy

llama_first()

from ragcli.config import load_config  # noqa: E402
from ragcli.retrieve import Searcher  # noqa: E402
from ragcli.retrieve.passages import evidence_passages  # noqa: E402
from ragcli.store.passages import PASSAGES_NAME  # noqa: E402

BATCH = 256


def main() -> None:
    config = load_config()
    with sqlite3.connect(config.index_dir / "manifest.sqlite") as db:
        ids = [row[0] for row in db.execute("SELECT id FROM chunks")]
    searcher = Searcher(config)
    t0 = time.perf_counter()
    texts = evidence_passages(searcher.index.chunks(ids).values())  # as the watcher does (watch/prefill.py)
    for i in range(0, len(texts), BATCH):
        searcher.embed_passages(texts[i:i + BATCH])  # read from the cache or embedded and written
    seconds = time.perf_counter() - t0
    searcher.close()
    size = sum(p.stat().st_size for p in config.index_dir.glob(PASSAGES_NAME + "*"))
    print(f"{config.index_dir}: {len(ids)} chunks, {len(texts)} passages in {seconds:.0f}s, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
