"""Embedding throughput of the built-in MiniLM variants on this machine, against today's
settings in the same run, with retrieval quality on a SciFact subset.

    python bench/bench_embed_variants.py [--limit 240] [--rounds 3] [--scifact-docs 1200]
    python bench/bench_embed_variants.py --no-speed --engines     # numpy vs llama.cpp, all of SciFact

Throughput: the same chunk-sized texts (pieces of the Obsidian help vault, ~200 word pieces,
what the chunker aims at) through ``LlamaEmbedder`` for each variant, rounds interleaved
(today, variant, today, ...) so a busy machine hurts all alike; chunks/s of the embed call
alone, model loads excluded. Variants: the engine (numpy's forward pass today, llama.cpp before;
a quantised file always runs on llama.cpp), the GGUF file type (F32 today, F16 before, Q8_0), the
packing budget per call (512 today) and the split of threads into workers (2 x 1 today).

Quality: nDCG@10 of hybrid and vector search on a SciFact subset (every judged document
plus seeded random others, ``--scifact-docs`` in all; the first ``--dev`` judged queries
are "dev", the rest "test"), through ``maintenance.eval.evaluate`` for F16 and Q8_0. A
subset keeps the run to minutes on 2 cores; its absolute nDCG is higher than the full
corpus's (fewer distractors), so read the difference between the two files, not the level.
Prints, never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_embed import DEFAULT_CORPUS, corpus_chunks  # noqa: E402
from ragcli.config import load_config  # noqa: E402
from ragcli.embed import model_id_for  # noqa: E402
from ragcli.embed.builtin import convert_builtin_embed  # noqa: E402
from ragcli.embed.llama import MINILM_MAX_TOKENS, LlamaEmbedder  # noqa: E402

SCIFACT = REPO.parent / "shared" / "corpora" / "scifact"
FILE_TYPES = ("f32", "f16", "q8_0")  # today's first

# (label, file type, batch tokens, workers, threads, engine): the first is today's make_embedder.
VARIANTS = [
    ("today: f32 numpy, 512 tok, 2x1", "f32", 512, 2, 2, "auto"),
    ("f32 llama.cpp, 512 tok, 2x1", "f32", 512, 2, 2, "llama.cpp"),
    ("f32 numpy, 1024 tok, 2x1", "f32", 1024, 2, 2, "auto"),
    ("f32 numpy, 256 tok, 2x1", "f32", 256, 2, 2, "auto"),
    ("f16 numpy, 512 tok, 2x1", "f16", 512, 2, 2, "auto"),
    ("f16 llama.cpp, 512 tok, 2x1", "f16", 512, 2, 2, "llama.cpp"),
    ("f32 llama.cpp, 256 tok, 2x1", "f32", 256, 2, 2, "llama.cpp"),
    ("q8_0, 512 tok, 2x1", "q8_0", 512, 2, 2, "auto"),
    ("q8_0, 256 tok, 2x1", "q8_0", 256, 2, 2, "auto"),
    ("f16 llama.cpp, 256 tok, 1x2", "f16", 256, 1, 2, "llama.cpp"),
    ("f16 llama.cpp, 256 tok, 1x1", "f16", 256, 1, 1, "llama.cpp"),
]

def throughput(config, texts: list[str], rounds: int, only: list[str] | None) -> None:
    paths = {ft: convert_builtin_embed(config, lambda p: print(p.message, file=sys.stderr), ft)
             if not (config.models_dir / f"all-MiniLM-L6-v2.{ft}.v1.gguf").is_file()
             else config.models_dir / f"all-MiniLM-L6-v2.{ft}.v1.gguf" for ft in FILE_TYPES}
    variants = [v for v in VARIANTS if v is VARIANTS[0] or not only or any(o in v[0] for o in only)]
    embedders = {}
    for label, ft, batch, workers, threads, engine in variants:
        embedders[label] = LlamaEmbedder(paths[ft], model_id=model_id_for(paths[ft], ft), n_threads=threads,
                                         max_tokens=MINILM_MAX_TOKENS, batch_tokens=batch, workers=workers,
                                         engine=engine)
        embedders[label].embed(texts[:8])  # warm-up
    speeds: dict[str, list[float]] = {label: [] for label in embedders}
    per_cpu: dict[str, list[float]] = {label: [] for label in embedders}
    vectors = {}
    for r in range(rounds):
        for label, embedder in embedders.items():
            t, c = time.perf_counter(), time.process_time()
            vectors[label] = embedder.embed(texts)
            speeds[label].append(len(texts) / (time.perf_counter() - t))
            # chunks per CPU-second (all threads): what a variant costs, less sensitive to
            # how much of the shared machine this process happened to get
            per_cpu[label].append(len(texts) / max(time.process_time() - c, 1e-9))
        print(f"round {r + 1}: " + "  ".join(f"{s[-1]:5.1f}" for s in speeds.values())
              + f"   (load {os.getloadavg()[0]:.1f})", flush=True)
    today = VARIANTS[0][0]
    base = statistics.median(speeds[today])
    base_cpu = statistics.median(per_cpu[today])
    print(f"\n{'variant':28s} {'c/s':>6s} {'ratio':>6s} {'round ratios':>24s} {'c/cpu-s':>8s} {'ratio':>6s} "
          f"{'cos min':>8s}")
    for label, s in speeds.items():
        ratios = [a / b for a, b in zip(s, speeds[today])]
        cos = float((vectors[label] * vectors[today]).sum(axis=1).min())
        cpu = statistics.median(per_cpu[label])
        print(f"{label:28s} {statistics.median(s):6.1f} {statistics.median(s) / base:6.2f} "
              f"{', '.join(f'{x:.2f}' for x in ratios):>24s} {cpu:8.2f} {cpu / base_cpu:6.2f} {cos:8.5f}")
    for embedder in embedders.values():
        embedder.close()


def scifact_subset(target: Path, docs: int, seed: int = 23) -> None:
    """A BEIR folder with every judged document plus seeded random others."""
    qrels = (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    judged = {line.split("\t")[1] for line in qrels[1:] if line.strip()}
    lines = (SCIFACT / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    rest = [line for line in lines if json.loads(line)["_id"] not in judged]
    random.Random(seed).shuffle(rest)
    keep = [line for line in lines if json.loads(line)["_id"] in judged] + rest[: max(0, docs - len(judged))]
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    (target / "corpus.jsonl").write_text("\n".join(keep) + "\n", encoding="utf-8")
    (target / "queries.jsonl").write_bytes((SCIFACT / "queries.jsonl").read_bytes())
    (target / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")


def quality(config, docs: int, dev: int) -> None:
    from ragcli.maintenance.eval import evaluate, load_beir

    folder = Path(tempfile.gettempdir()) / f"ragcli-scifact-subset-{docs}"
    if not (folder / "corpus.jsonl").is_file():
        scifact_subset(folder, docs)
    qids = list(load_beir(folder).queries)
    dev_ids, test_ids = qids[:dev], qids[dev:]
    print(f"\nSciFact subset: {docs} docs (all judged + random), {len(qids)} queries: dev {len(dev_ids)}, "
          f"test {len(test_ids)}")
    print(f"{'model':8s} {'mode':7s} {'nDCG@10':>8s} {'dev':>7s} {'test':>7s} {'index s':>8s}")
    results = {}
    for ft in FILE_TYPES:
        path = config.models_dir / f"all-MiniLM-L6-v2.{ft}.v1.gguf"
        # embed_model set to the file: its own eval cache key, its own fingerprint
        import dataclasses

        fconfig = dataclasses.replace(config, embed_model=str(path))
        for mode in ("hybrid", "vector"):
            rep = evaluate(fconfig, folder, mode=mode)
            pq = rep.per_query
            d = sum(pq[q]["ndcg@10"] for q in dev_ids) / len(dev_ids)
            t = sum(pq[q]["ndcg@10"] for q in test_ids) / len(test_ids)
            results[(ft, mode)] = (rep.ndcg_10, d, t)
            print(f"{ft:8s} {mode:7s} {rep.ndcg_10:8.4f} {d:7.4f} {t:7.4f} {rep.index_seconds:8.1f}", flush=True)
    for mode in ("hybrid", "vector"):
        a = results[(FILE_TYPES[0], mode)]
        for ft in FILE_TYPES[1:]:
            b = results[(ft, mode)]
            print(f"{ft} - {FILE_TYPES[0]} {mode:7s}: all {b[0] - a[0]:+.4f}, dev {b[1] - a[1]:+.4f}, "
                  f"test {b[2] - a[2]:+.4f}")


def engines_quality(config, folder: Path, dev: int) -> None:
    """nDCG@10 of both CPU engines on one BEIR folder, each indexing it from nothing (its own
    cache folder, so no vector is reused), hybrid and vector; the first ``dev`` judged queries
    are "dev", the rest "test"."""
    from ragcli.maintenance.eval import evaluate, load_beir

    path = config.models_dir / "all-MiniLM-L6-v2.f32.v1.gguf"
    qids = list(load_beir(folder).queries)
    print(f"\n{folder.name}: {len(qids)} queries, dev {dev}, test {len(qids) - dev}; each engine indexes it afresh")
    print(f"{'engine':10s} {'mode':7s} {'nDCG@10':>8s} {'dev':>7s} {'test':>7s} {'index s':>8s} {'chunks':>7s}")
    results = {}
    for engine in ("numpy", "llama.cpp"):
        embedder = LlamaEmbedder(path, model_id=model_id_for(path, "f32"), n_threads=config.n_threads,
                                 max_tokens=MINILM_MAX_TOKENS, engine="auto" if engine == "numpy" else engine)
        assert embedder.engine == engine, embedder.engine
        with tempfile.TemporaryDirectory(prefix=f"engines-{engine.replace('.', '')}-") as cache:
            for mode in ("hybrid", "vector"):
                rep = evaluate(config, folder, mode=mode, cache_root=Path(cache), embedder=embedder)
                pq = rep.per_query
                d = sum(pq[q]["ndcg@10"] for q in qids[:dev]) / dev
                t = sum(pq[q]["ndcg@10"] for q in qids[dev:]) / (len(qids) - dev)
                results[(engine, mode)] = (rep.ndcg_10, d, t)
                print(f"{engine:10s} {mode:7s} {rep.ndcg_10:8.4f} {d:7.4f} {t:7.4f} {rep.index_seconds:8.1f} "
                      f"{rep.embedded:7d}", flush=True)
        embedder.close()
    for mode in ("hybrid", "vector"):
        a, b = results[("llama.cpp", mode)], results[("numpy", mode)]
        print(f"numpy - llama.cpp {mode:7s}: all {b[0] - a[0]:+.4f}, dev {b[1] - a[1]:+.4f}, test {b[2] - a[2]:+.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=240, help="chunks per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="variants whose label contains one of these words")
    parser.add_argument("--scifact-docs", type=int, default=1200, help="0: skip the quality part")
    parser.add_argument("--dev", type=int, default=100)
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--engines", action="store_true",
                        help="numpy against llama.cpp on all of SciFact, each indexing it afresh")
    args = parser.parse_args()
    home = Path(os.environ.get("RAG_HOME") or Path(tempfile.gettempdir()) / "ragcli-bench-home")
    config = load_config(env=dict(os.environ, RAG_HOME=str(home)))
    print(f"cpu_count {os.cpu_count()}, load {os.getloadavg()}")
    if not args.no_speed:
        texts = corpus_chunks(args.corpus, 110, args.limit)
        print(f"{len(texts)} chunks of ~110 words from {args.corpus}")
        throughput(config, texts, args.rounds, args.only)
    if args.engines:
        engines_quality(config, SCIFACT, args.dev)
    elif args.scifact_docs:
        quality(config, args.scifact_docs, args.dev)


if __name__ == "__main__":
    main()
