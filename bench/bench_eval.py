"""Retrieval quality and speed: every mode and fusion variant on a BEIR folder, plus warm
query latency on the Obsidian vault.

    python bench/bench_eval.py                       # SciFact, all modes and fusion variants
    python bench/bench_eval.py --dataset DIR --dev 100
    python bench/bench_eval.py --vault               # warm hybrid query latency on the vault

Tuning rule (so the figures are honest): the first ``--dev`` judged queries (qrels order)
are the development split, the only ones looked at while choosing fusion settings; the
rest are reported apart as held out. The eval index is cached (see ragcli.maintenance.eval), so only
the first run pays for embedding. Nothing here asserts on time: it prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "corpora"

from ragcli.config import load_config  # noqa: E402
from ragcli.maintenance.eval import evaluate, load_beir  # noqa: E402
from fusion_variants import Variant  # noqa: E402
from ragcli.retrieve import Fusion, Searcher  # noqa: E402

BEFORE = Variant(full_keyword_cover=0.0, note_weight=0.0, respell=False)  # the shipped fusion before issue 13
VARIANTS = [  # (label, mode, fusion)
    ("keyword (FTS5 bm25)", "keyword", None),
    ("vector (MiniLM cosine)", "vector", BEFORE),
    ("hybrid: RRF k=60 (baseline)", "hybrid", Variant(method="rrf", complete=False)),
    ("hybrid: convex min-max, partial scores", "hybrid",
     replace(BEFORE, keyword_scale="minmax", complete=False)),
    ("hybrid: convex min-max, completed", "hybrid", replace(BEFORE, keyword_scale="minmax")),
    ("hybrid: convex, bm25/sum(idf), completed", "hybrid", BEFORE),
    ("hybrid: + cosines scaled on own top n", "hybrid", replace(BEFORE, vector_scale="own")),
    ("hybrid: + keyword weight by cover", "hybrid", replace(BEFORE, full_keyword_cover=0.5)),
    ("hybrid: + note centroid 0.5", "hybrid", replace(BEFORE, note_weight=0.5)),
    ("vector: + note centroid 0.5", "vector", Fusion()),
    ("hybrid: + cover + centroid", "hybrid", Fusion(respell=False)),
    ("hybrid: + spelling-slip fallback *", "hybrid", Fusion()),
]


def _mean(per_query: dict, qids: list[str], metric: str) -> float:
    values = [per_query[q][metric] for q in qids if q in per_query]
    return sum(values) / len(values) if values else 0.0


def bench_dataset(folder: Path, dev: int, run_dir: Path | None, alphas: list[float],
                  only: list[str] | None = None) -> None:
    config = load_config()
    data = load_beir(folder)
    qids = list(data.queries)
    dev_ids, held = qids[:dev], qids[dev:]
    from ragcli.embed import make_embedder

    embedder = make_embedder(config)
    variants = list(VARIANTS) + [(f"hybrid: shipped with alpha={a}", "hybrid", Fusion(alpha=a))
                                 for a in alphas]
    if only:
        variants = [v for v in variants if any(word in v[0] for word in only)]
    print(f"{folder.name}: {len(data.corpus)} docs, {len(qids)} judged queries "
          f"(dev = first {len(dev_ids)}, held out = {len(held)})")
    header = (f"{'variant':42s} {'nDCG@10':>8s} {'R@10':>7s} {'R@100':>7s} {'MRR@10':>7s} "
              f"{'dev':>7s} {'held':>7s} {'p50 ms':>7s} {'p95 ms':>7s}")
    print(header)
    print("-" * len(header))
    for label, mode, fusion in variants:
        run_file = run_dir / f"{label.split(':')[0].split()[0]}-{abs(hash(label)) % 10**6}.run" if run_dir else None
        report = evaluate(config, folder, mode=mode, fusion=fusion, embedder=embedder, run_file=run_file)
        pq = report.per_query
        print(f"{label:42s} {report.ndcg_10:8.4f} {report.recall_10:7.4f} {report.recall_100:7.4f} "
              f"{report.mrr_10:7.4f} {_mean(pq, dev_ids, 'ndcg@10'):7.4f} {_mean(pq, held, 'ndcg@10'):7.4f} "
              f"{report.query_ms_p50:7.1f} {report.query_ms_p95:7.1f}", flush=True)
        if report.embedded:
            print(f"  (indexed {report.docs} docs / {report.chunks} chunks in {report.index_seconds:.1f}s, "
                  f"{report.embedded / report.index_seconds:.1f} chunks/s embedded)")
        if run_file:
            print(f"  run: {run_file}")
    print("* shipped default (alpha 0.5; note weight and keyword cover chosen on the dev split only)")
    print(f"index: {report.docs} docs, {report.chunks} chunks, cached at {report.index_dir}")


VAULT_QUERIES = [
    "how do I link to a heading in another note",
    "sync my vault between phone and computer",
    "keyboard shortcut for the command palette",
    "embed a PDF page",
    "what is a canvas",
    "daily notes template",
    "change the default attachment folder",
    "publish site custom domain",
    "graph view filters",
    "Ctrl+Shift+F",
]


def bench_vault(vault: Path, repeats: int, home: Path | None = None) -> None:
    """Warm query latency on the Obsidian vault: an index built once into a cached home,
    or an existing one (``--home``, used as it is)."""
    from ragcli.pipeline import index

    if home is None:
        home = Path(tempfile.gettempdir()) / "ragcli-bench-vault"
        config = load_config({"data_dir": str(home)})
        started = time.monotonic()
        report = index(config, [vault])
        print(f"vault: {vault} indexed/updated in {time.monotonic() - started:.1f}s "
              f"({report.files_indexed} files changed, {report.chunks_added} chunks added)")
    else:
        config = load_config({"data_dir": str(home)})
    searcher = Searcher(config)
    files, chunks = searcher.index.counts()
    print(f"index {config.index_dir}: {files} files, {chunks} chunks")
    try:
        searcher.search("warm up", k=10, mode="hybrid")
        for mode in ("hybrid", "vector", "keyword"):
            times = []
            for _ in range(repeats):
                for query in VAULT_QUERIES:
                    t0 = time.perf_counter()
                    searcher.search(query, k=10, mode=mode)
                    times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            print(f"  {mode:8s} warm query: p50 {statistics.median(times):6.1f} ms, "
                  f"p95 {times[int(len(times) * 0.95) - 1]:6.1f} ms over {len(times)} queries (k=10)")
        t0 = time.perf_counter()
        for query in VAULT_QUERIES:
            searcher.embedder.embed([query])
        print(f"  of which query embedding: {(time.perf_counter() - t0) * 1000 / len(VAULT_QUERIES):.1f} ms/query")
    finally:
        searcher.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=SHARED / "scifact")
    parser.add_argument("--dev", type=int, default=100, help="first N judged queries form the dev split")
    parser.add_argument("--alphas", type=float, nargs="*", default=[0.3, 0.7])
    parser.add_argument("--only", nargs="*", default=None, help="only variants whose label holds one of these")
    parser.add_argument("--run-dir", type=Path, default=None, help="write each variant's TREC run here")
    parser.add_argument("--vault", action="store_true", help="measure warm query latency on the vault")
    parser.add_argument("--vault-path", type=Path, default=SHARED / "obsidian-help" / "en")
    parser.add_argument("--home", type=Path, default=None, help="use the index under this data dir as it is")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.vault:
        bench_vault(args.vault_path, args.repeats, args.home)
    else:
        bench_dataset(args.dataset, args.dev, args.run_dir, args.alphas, args.only)


if __name__ == "__main__":
    main()
