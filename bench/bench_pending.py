"""Search while phase two of `rag index` is under way: hit@5 with part of the vectors in.

    RAG_HOME=<home with an index of the Obsidian help vault> python bench/bench_pending.py

The index's manifest is copied once per fraction, and the vectors of every chunk past the
first ``f`` of the chunks (in the order phase one wrote them, which is the order phase two
embeds them) are dropped from the copy's vector cache: the state a run stopped at ``f`` of
phase two leaves. Readers of a small index search the cache (``store.flat``), so the copy
needs no Chroma. Questions: the help-vault questions of bench/questions (answers.jsonl
answerable, paraphrase.jsonl, howto.jsonl), each with the note that answers it; hit@5 =
that note among the notes of the top 5 hits.

Two rankings of the chunks that wait for a vector are compared in the same run:
- shipped: ranked by their keywords alone on the fused scale (``fuse_convex``'s ``unvectored``);
- cliff: what fusion did before, a vector score of 0 (they lose the vector side's weight).
Split by whether the answering note is embedded yet, to show where a cliff would fall.
Prints figures; never asserts.

Figures seen (2-core box, load average 5-6; help vault, 1,827 chunks, 196 questions):

| vectors in | hit@5 shipped | cliff (vector score 0) | questions on waiting notes: shipped / cliff |
|---|---|---|---|
| 0%   | 0.612 | 0.612 | 0.612 / 0.612 (196) |
| 10%  | 0.607 | 0.388 | 0.597 / 0.372 (191) |
| 50%  | 0.724 | 0.531 | 0.550 / 0.150 (100) |
| 100% | 0.893 | -     | - |

Keyword mode alone on the full index: 0.617. Imputing the bm25 scaled by the sum of idf
(the keyword side's own scale) instead of min-max gave 0.536 at 10% and 0.679 at 50%.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
VAULT = REPO.parent / "shared" / "corpora" / "obsidian-help" / "en"

from ragcli.config import load_config  # noqa: E402
from ragcli.retrieve import Fusion, Searcher  # noqa: E402
from ragcli.store import Index  # noqa: E402


class Cliff(Fusion):
    """Fusion as before: a chunk with no vector scores 0 on the vector side."""

    def fuse(self, vec, kw, evidence, kw_scores, scale, unvectored=frozenset()):
        return super().fuse(vec, kw, evidence, kw_scores, scale)


def questions() -> list[tuple[str, str]]:
    """(question, answering note's path relative to the vault)."""
    out = []
    for name in ("answers", "paraphrase", "howto"):
        for line in (REPO / "bench" / "questions" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("corpus", "obsidian-help") == "obsidian-help" and row.get("answerable", True) and row["path"]:
                out.append((row["question"], row["path"]))
    return out


def with_fraction(source: Path, target: Path, fraction: float) -> tuple[int, set[str]]:
    """A copy of the manifest with the first ``fraction`` of the chunks embedded; returns
    (chunks without a vector, paths of notes with a chunk waiting)."""
    (target / "index").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "index" / "manifest.sqlite", target / "index" / "manifest.sqlite")
    db = sqlite3.connect(target / "index" / "manifest.sqlite")
    try:
        rows = db.execute("SELECT rowid, vec_key, path FROM chunks ORDER BY rowid").fetchall()
        keep = int(len(rows) * fraction)
        kept = {key for _r, key, _p in rows[:keep]}
        drop = [(key,) for _r, key, _p in rows[keep:] if key not in kept]
        db.executemany("DELETE FROM vectors WHERE key = ?", drop)
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('vectors_pending', ?)", ("1" if drop else "0",))
        db.commit()
        waiting = {p for _r, key, p in rows[keep:] if key not in kept}
        return len(rows) - keep, waiting
    finally:
        db.close()


def hit_at_5(searcher: Searcher, items: list[tuple[str, str]], mode: str) -> list[bool]:
    hits = []
    for question, path in items:
        notes = []
        for hit in searcher.search(question, k=20, mode=mode):
            if hit.chunk.path not in notes:
                notes.append(hit.chunk.path)
        hits.append(str(VAULT / path) in notes[:5])
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fractions", type=float, nargs="*", default=[0.0, 0.1, 0.5, 1.0])
    args = parser.parse_args()
    source = Path(os.environ["RAG_HOME"])
    items = questions()
    print(f"{len(items)} help-vault questions; load average {os.getloadavg()[0]:.1f}")
    print(f"{'vectors in':>10s} {'waiting':>8s} {'ranking':>8s} {'hit@5':>6s} {'embedded q':>11s} "
          f"{'waiting q':>10s} {'s':>5s}")
    work = Path(tempfile.mkdtemp(prefix="bench-pending-"))
    from ragcli.embed import make_embedder

    embedder = make_embedder(load_config(env=dict(os.environ, RAG_HOME=str(source))))
    for fraction in args.fractions:
        home = work / f"f{fraction}"
        missing, waiting = with_fraction(source, home, fraction)
        config = replace(load_config(env=dict(os.environ, RAG_HOME=str(home))), models_dir=load_config().models_dir)
        for label, fusion in (("shipped", Fusion()), ("cliff", Cliff())):
            if fraction >= 1.0 and label == "cliff":
                continue
            searcher = Searcher(config, Index.open_reader(config), embedder=embedder, fusion=fusion)
            started = time.perf_counter()
            hits = hit_at_5(searcher, items, "hybrid")
            seconds = time.perf_counter() - started
            searcher.close()
            on_waiting = [h for h, (_q, p) in zip(hits, items) if str(VAULT / p) in waiting]
            on_embedded = [h for h, (_q, p) in zip(hits, items) if str(VAULT / p) not in waiting]

            def rate(values):
                return f"{sum(values) / len(values):.3f} ({len(values)})" if values else "-"
            print(f"{fraction:10.0%} {missing:8d} {label:>8s} {sum(hits) / len(hits):6.3f} "
                  f"{rate(on_embedded):>11s} {rate(on_waiting):>10s} {seconds:5.1f}", flush=True)
    config = load_config(env=dict(os.environ, RAG_HOME=str(source)))
    searcher = Searcher(config, Index.open_reader(config), embedder=embedder)
    keyword = hit_at_5(searcher, items, "keyword")
    searcher.close()
    print(f"keyword mode alone (full index): hit@5 {sum(keyword) / len(keyword):.3f}")
    embedder.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
