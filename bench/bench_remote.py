"""The remote seams, measured: an embeddings server (embed_url) and a Chroma server
(chroma_url) against the in-process defaults, on one corpus, in one run.

Prints, for the Obsidian help vault by default:
1. embeddings: a cold `rag index` in-process (the baseline) and through llama-cpp-python's
   server on 127.0.0.1 serving the same MiniLM GGUF (`python -m llama_cpp.server --embedding
   true`): wall time, chunks/s and the ratio. The remote index has more, smaller chunks (no
   tokenizer on the client: the token estimate errs high), so the same chunk texts are also
   embedded both ways in this process (loading excluded) for a like-for-like chunks/s; and
   recall@5 of the paraphrase questions' source note for both indexes;
2. vectors: the same index on the embedded store and on a local `chroma run`: filling an empty
   server collection from the vector cache, `rag index --rebuild` with a warm vector cache
   (parse, chunk and store; nothing is embedded), and warm search latency p50/p95 (hybrid,
   end to end with the query embedding; and the vector query alone), plus how often both
   stores return the same top 10.

Both servers share the machine with the client, as they would on a laptop. Keep it short
(about 7-9 minutes on 2 busy cores):
    nice -n 10 .venv/bin/python bench/bench_remote.py [--corpus DIR] [--sample 256]

Seen on the 2-core box under a load average of 8-9 (two runs; trust the ratios):
- cold index, in-process 144.8 / 194.1 s for 1,830 chunks; through the server 174.3 / 200.9 s
  for 2,464 chunks: wall 1.20x / 1.04x, chunks/s 1.12x / 1.30x; the same 256 chunk texts at
  1.22x / 1.02x the in-process rate, cosine 1.0000; recall@5 0.816 for both indexes;
- Chroma server: filled from the cache in 3.9 / 4.9 s; rebuild with a warm cache 1.06x / 0.83x
  the embedded store's; hybrid search p50 26.9 -> 31.5 ms (1.17x), p95 46.8 -> 55.2 ms;
  the vector query alone p50 1.5 -> 4.6 ms; the same top 10 for 162 of 163 queries (second
  run, queries interleaved between the two stores; the first run timed them one store after
  the other and is not comparable).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
SHARED = ROOT.parent / "shared" / "corpora"
DEFAULT_CORPUS = SHARED / "obsidian-help" / "en"
MODELS_CACHE = Path(os.environ.get("RAG_BENCH_MODELS", Path.home() / ".cache" / "ragcli-bench" / "models"))

from servers import chroma_server, embedding_server  # noqa: E402

from ragcli.config import load_config  # noqa: E402


def rag(args: list[str], env: dict) -> tuple[float, dict]:
    """Run `rag ... --json` in a child process; (wall seconds, its JSON report)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", *args, "--json"], env=env, capture_output=True,
                          text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"rag {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, json.loads(proc.stdout)


def chunk_texts(home: Path, n: int) -> list[str]:
    from ragcli.types import Chunk

    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    rows = db.execute("SELECT id, path, title, heading, text, line_start, line_end, page FROM chunks ORDER BY id")
    texts = [Chunk(*row).embed_text() for row in rows]
    db.close()
    step = max(1, len(texts) // n)
    return texts[::step][:n]


def questions(corpus: Path) -> list[tuple[str, str]]:
    """(question, source note's path) of the Obsidian help question sets."""
    found = []
    for name in ("paraphrase.jsonl", "answers.jsonl"):
        for line in (ROOT / "bench" / "questions" / name).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            if item.get("corpus", "obsidian-help") == "obsidian-help" and item.get("path"):
                found.append((item["question"], str(corpus / item["path"])))
    return found


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def recall_at_5(searcher, items: list[tuple[str, str]]) -> float:
    hits = sum(any(h.chunk.path == path for h in searcher.search(q, k=5)) for q, path in items)
    return hits / len(items)


def bench_embeddings(corpus: Path, tmp: Path, env: dict, sample: int, items) -> Path:
    from ragcli.embed import make_embedder
    from ragcli.embed.builtin import resolve_embed_model
    from ragcli.embed.openai import OpenAIEmbedder
    from ragcli.retrieve import Searcher

    local_home = tmp / "local"
    wall_l, rep_l = rag(["index", str(corpus)], {**env, "RAG_HOME": str(local_home)})
    model = resolve_embed_model(load_config(env={**env, "RAG_HOME": str(local_home)})).path
    server = embedding_server(model, tmp / "embed-server.log", threads=os.cpu_count() or 1).start()
    try:
        url = server.url + "/v1"
        remote_home = tmp / "remote"
        wall_r, rep_r = rag(["index", str(corpus)], {**env, "RAG_HOME": str(remote_home), "RAG_EMBED_URL": url})
        print(f"\n== embeddings: {corpus} ({rep_l['files_seen']} files)")
        for label, wall, rep in (("in-process (LlamaEmbedder)", wall_l, rep_l),
                                 ("server (llama_cpp.server)", wall_r, rep_r)):
            print(f"{label:28s} cold index {wall:7.1f} s wall, {rep['chunks_added']:5d} chunks "
                  f"({rep['embedded']} embedded) -> {rep['chunks_added'] / wall:5.1f} chunks/s")
        speed = (rep_r['chunks_added'] / wall_r) / (rep_l['chunks_added'] / wall_l)
        print(f"ratio server/in-process: chunks/s end to end {speed:.2f}x, "
              f"wall time {wall_r / wall_l:.2f}x "
              f"(the server's index has {rep_r['chunks_added'] / rep_l['chunks_added']:.2f}x "
              f"the chunks: smaller ones)")

        texts = chunk_texts(local_home, sample)
        local = make_embedder(load_config(env={**env, "RAG_HOME": str(local_home)}))
        remote = OpenAIEmbedder(url)
        seconds = {"in-process": 0.0, "server": 0.0}
        vectors = {"in-process": [], "server": []}
        pair = (("in-process", local), ("server", remote))
        for i, start_at in enumerate(range(0, len(texts), 32)):  # alternate slices: the load drifts
            part = texts[start_at:start_at + 32]
            for label, embedder in (pair if i % 2 == 0 else pair[::-1]):
                if i == 0:
                    embedder.embed(part[:2])  # warm
                start = time.perf_counter()
                vectors[label].append(embedder.embed(part))
                seconds[label] += time.perf_counter() - start
        import numpy as np

        cos = (np.concatenate(vectors["in-process"]) * np.concatenate(vectors["server"])).sum(axis=1)
        rate = {k: len(texts) / v for k, v in seconds.items()}
        print(f"same {len(texts)} chunk texts, model loaded: in-process {rate['in-process']:.1f} chunks/s, "
              f"server {rate['server']:.1f} chunks/s, ratio {rate['server'] / rate['in-process']:.2f}x; "
              f"cosine min {cos.min():.4f}")
        local.close()

        scores = {}
        for label, home, extra in (("in-process", local_home, {}), ("server", remote_home, {"embed_url": url})):
            config = dataclasses.replace(load_config(env={**env, "RAG_HOME": str(home)}), **extra)
            searcher = Searcher(config)
            scores[label] = recall_at_5(searcher, items)
            searcher.close()
        print(f"recall@5 of the source note over {len(items)} questions: in-process index "
              f"{scores['in-process']:.3f}, server-embedded index {scores['server']:.3f}")
    finally:
        server.stop()
    return local_home


def bench_vectors(local_home: Path, tmp: Path, env: dict, items) -> None:
    from ragcli.retrieve import Searcher

    server = chroma_server(tmp / "chroma-data", tmp / "chroma.log").start()
    try:
        chroma_home = tmp / "chroma-home"
        shutil.copytree(local_home, chroma_home)
        shutil.rmtree(chroma_home / "index" / "chroma")
        env_c = {**env, "RAG_HOME": str(chroma_home), "RAG_CHROMA_URL": server.url}
        env_l = {**env, "RAG_HOME": str(local_home)}
        fill_s, _ = rag(["index"], env_c)  # an empty collection: filled from the vector cache
        print("\n== vectors: embedded Chroma (PersistentClient) vs a Chroma server (chroma run, loopback)")
        print(f"server: fill an empty collection from the vector cache (`rag index`): {fill_s:.1f} s wall")
        walls = {}
        for label, e in (("embedded", env_l), ("server", env_c)):
            wall, rep = rag(["index", "--rebuild"], e)
            walls[label] = wall
            print(f"{label:9s} `rag index --rebuild`, warm cache: {wall:6.1f} s wall, {rep['chunks_added']} chunks "
                  f"({rep['embedded']} embedded)")
        print(f"ratio server/embedded, rebuild wall: {walls['server'] / walls['embedded']:.2f}x")

        queries = [q for q, _ in items]
        searchers = {}
        for label, home, url in (("embedded", local_home, ""), ("server", chroma_home, server.url)):
            config = dataclasses.replace(load_config(env={**env, "RAG_HOME": str(home)}), chroma_url=url)
            searchers[label] = Searcher(config)
            searchers[label].search(queries[0], k=10)  # warm: model loaded, store opened
        embedder = searchers["embedded"].embedder
        hybrid = {label: [] for label in searchers}
        raw = {label: [] for label in searchers}
        top = {label: [] for label in searchers}
        for i, q in enumerate(queries):  # the two stores take turns, so load drift hits both alike
            vector = embedder.embed([q])[0]
            for label in (("embedded", "server") if i % 2 == 0 else ("server", "embedded")):
                searcher = searchers[label]
                start = time.perf_counter()
                searcher.search(q, k=10, mode="hybrid")
                hybrid[label].append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                ids = searcher.index.vector_search(vector, 10)
                raw[label].append((time.perf_counter() - start) * 1000)
                top[label].append(tuple(c for c, _ in ids))
        for label, searcher in searchers.items():
            searcher.close()
            print(f"{label:9s} search over {len(queries)} queries: "
                  f"hybrid p50 {statistics.median(hybrid[label]):6.1f} ms "
                  f"p95 {pct(hybrid[label], 0.95):6.1f} ms; vector query alone p50 "
                  f"{statistics.median(raw[label]):5.1f} ms p95 {pct(raw[label], 0.95):5.1f} ms")
        same = sum(a == b for a, b in zip(top["embedded"], top["server"]))
        ratio = statistics.median(hybrid["server"]) / statistics.median(hybrid["embedded"])
        print(f"ratio server/embedded, hybrid p50: {ratio:.2f}x; same top-10 ids for {same}/{len(queries)} queries")
    finally:
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--sample", type=int, default=256, help="chunk texts embedded both ways, like for like")
    args = ap.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"corpus not found: {args.corpus}")
    MODELS_CACHE.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_MODELS_DIR=str(MODELS_CACHE), OMP_WAIT_POLICY="PASSIVE", ANONYMIZED_TELEMETRY="False")
    os.environ.update(RAG_MODELS_DIR=str(MODELS_CACHE), ANONYMIZED_TELEMETRY="False")
    items = questions(args.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # Convert the built-in embedding model once, outside the timings.
        subprocess.run([sys.executable, "-c", "from ragcli.config import load_config; from ragcli.embed import "
                        "make_embedder; make_embedder(load_config())"],
                       env={**env, "RAG_HOME": str(tmp / "convert")}, cwd=ROOT, check=True)
        local_home = bench_embeddings(args.corpus, tmp, env, args.sample, items)
        bench_vectors(local_home, tmp, env, items)
    print(f"\n(total {time.perf_counter() - started:.0f} s; cores: {os.cpu_count()}, "
          f"load average at the end: {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
