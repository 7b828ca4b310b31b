"""Embedding throughput: ragcli's LlamaEmbedder vs sentence-transformers (torch, CPU).

    python bench/bench_embed.py [--limit N] [--rounds R] [--words W]

Both sides embed the same chunk-sized texts (pieces of the Obsidian help vault), the
rounds alternate (ours, baseline, ours, ...) so a busy machine hurts both alike, and the
figures are chunks/s of the embedding call alone (model loading excluded on both sides).
The baseline is what most users would write, ``SentenceTransformer(folder).encode(texts)``
with its defaults, run in a separate venv (``--baseline-python``, default
``.venv-bench/bin/python``, or $RAG_BENCH_PYTHON) so torch never becomes a ragcli
dependency; it is skipped with a message when that venv is absent. Prints, never asserts.

Figures seen (2-core box shared with other work, load average 11-15 throughout, so
absolute chunks/s are low; the ratio is what to read), ~213-word-piece chunks:

| run (flags)                                  | ragcli chunks/s | s-t chunks/s | ratio |
|----------------------------------------------|-----------------|--------------|-------|
| default (F16, 2 contexts x 1 thread, flash)  | 5.0-6.2         | 3.8-4.7      | 1.31  |
| --llama-embed (Llama.embed, library defaults)| 0.4             | 3.3-3.5      | 0.12  |
| --workers 1 (one context, 2 threads)         | 0.7-1.8         | 4.1-4.4      | 0.30  |
| --no-flash                                   | 1.9-2.3         | 3.7-4.2      | 0.54  |
| --batch-tokens 2048                          | 3.1-3.9         | 4.1-4.3      | 0.83  |
| --file-type q8_0 (cosine 0.9995 vs s-t)      | 5.1-5.2         | 3.5-3.6      | 1.47  |
| --threads 1                                  | 6.0             | 4.7-4.8      | 1.26  |

Cosine agreement with sentence-transformers: 1.00000 mean and min (F16).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ragcli.config import load_config  # noqa: E402
from ragcli.embed import make_embedder, model_id_for  # noqa: E402
from ragcli.embed.builtin import convert_builtin_embed, resolve_embed_model  # noqa: E402
from ragcli.embed.llama import MINILM_MAX_TOKENS, LlamaEmbedder  # noqa: E402
from ragcli.models.packages import embed_source_dir  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-help" / "en"
DEFAULT_BASELINE = Path(os.environ.get("RAG_BENCH_PYTHON", REPO / ".venv-bench" / "bin" / "python"))

# Runs inside the baseline venv: load once, then time encode() per round on request.
BASELINE_SCRIPT = r"""
import json, sys, time
import numpy as np, torch
from sentence_transformers import SentenceTransformer
model_dir, texts_file, out_prefix, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
texts = json.load(open(texts_file))
model = SentenceTransformer(model_dir, device="cpu")
model.encode(texts[:8])  # warm-up, as on our side
print(json.dumps({"threads": torch.get_num_threads(), "torch": torch.__version__,
                  "max_seq_length": model.max_seq_length}), flush=True)
for r in range(rounds):
    sys.stdin.readline()  # wait for our turn: the rounds alternate with ragcli's
    t = time.perf_counter()
    vectors = model.encode(texts, normalize_embeddings=True)
    seconds = time.perf_counter() - t
    np.save(f"{out_prefix}.npy", vectors.astype(np.float32))
    print(json.dumps({"seconds": seconds}), flush=True)
"""


def corpus_chunks(root: Path, words: int, limit: int | None) -> list[str]:
    """~``words``-word pieces of every note (a plain splitter, not ragcli's chunker).

    110 words of this vault average ~200 MiniLM word pieces, the size ragcli's chunker
    aims at (chunk_tokens = 200)."""
    chunks: list[str] = []
    for path in sorted(root.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"^---\n.*?\n---\n", "", text, flags=re.S)  # front matter is not prose
        tokens = text.split()
        for start in range(0, len(tokens), words):
            piece = tokens[start:start + words]
            if len(piece) >= words // 3:  # skip tails too short to look like a chunk
                chunks.append(f"{path.stem}\n" + " ".join(piece))
    return chunks[:limit] if limit else chunks


class Baseline:
    """sentence-transformers in its own venv, driven one round at a time over a pipe."""

    def __init__(self, python: Path, texts: list[str], rounds: int, workdir: Path):
        texts_file = workdir / "texts.json"
        texts_file.write_text(json.dumps(texts))
        self.out = workdir / "baseline"
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        self.proc = subprocess.Popen(
            [str(python), "-c", BASELINE_SCRIPT, str(embed_source_dir()), str(texts_file), str(self.out), str(rounds)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        self.info = self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the baseline process ended early (run it by hand to see why)")
        return json.loads(line)

    def round(self) -> tuple[float, np.ndarray]:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        seconds = self._read()["seconds"]
        return seconds, np.load(f"{self.out}.npy")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def build_embedder(config, args):
    """make_embedder(config), unless an ablation flag asks for something else."""
    def progress(m):
        print(m, file=sys.stderr)
    ablation = args.workers or args.no_flash or args.batch_tokens or args.file_type or args.llama_embed
    if not ablation:
        return make_embedder(config, progress=progress)
    path = convert_builtin_embed(config, progress, args.file_type) if args.file_type else \
        resolve_embed_model(config, progress).path
    if args.llama_embed:
        return LlamaCppPythonEmbed(path, MINILM_MAX_TOKENS)
    kwargs = {"batch_tokens": args.batch_tokens} if args.batch_tokens else {}
    return LlamaEmbedder(path, model_id=model_id_for(path, path.stem), n_threads=config.n_threads,
                         max_tokens=MINILM_MAX_TOKENS, flash_attn=not args.no_flash,
                         workers=args.workers, **kwargs)


class LlamaCppPythonEmbed:
    """What one writes with llama-cpp-python's high-level API: Llama.embed per chunk."""

    def __init__(self, path: Path, max_tokens: int):
        from ragcli.models.llama import load_llama_cpp

        self.llama = load_llama_cpp().Llama(str(path), embedding=True, n_ctx=512, verbose=False)
        self.model_id = f"llama-cpp-python Llama.embed ({self.llama.n_threads} threads)"
        self.max_tokens = max_tokens

    def count_tokens(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode(), add_bos=False))

    def embed(self, texts):
        rows = []
        for text in texts:
            tokens = self.llama.tokenize(text.encode(), add_bos=False)[: self.max_tokens]
            rows.append(self.llama.embed(self.llama.detokenize(tokens).decode(errors="replace")))
        vectors = np.asarray(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--words", type=int, default=110)
    parser.add_argument("--limit", type=int, default=400, help="chunks per round (0: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-python", type=Path, default=DEFAULT_BASELINE)
    parser.add_argument("--threads", type=int, default=0, help="ragcli threads (0: all cores)")
    # ablations (defaults = what make_embedder does)
    parser.add_argument("--workers", type=int, default=None, help="llama.cpp contexts (default: one per thread)")
    parser.add_argument("--no-flash", action="store_true", help="disable flash attention")
    parser.add_argument("--batch-tokens", type=int, default=None, help="tokens per llama_decode")
    parser.add_argument("--file-type", choices=["f16", "q8_0"], default=None, help="built-in GGUF type")
    parser.add_argument("--llama-embed", action="store_true",
                        help="measure llama-cpp-python's Llama.embed(), one chunk per call, default settings")
    args = parser.parse_args()

    texts = corpus_chunks(args.corpus, args.words, args.limit or None)
    home = Path(os.environ.get("RAG_HOME") or Path(tempfile.gettempdir()) / "ragcli-bench-home")
    config = load_config(overrides={"threads": args.threads}, env=dict(os.environ, RAG_HOME=str(home)))
    embedder = build_embedder(config, args)
    lengths = [embedder.count_tokens(t) + 2 for t in texts]
    print(f"{len(texts)} chunks, word pieces mean {statistics.mean(lengths):.0f}, "
          f"median {statistics.median(lengths):.0f}, {sum(n > 256 for n in lengths)} over 256 (truncated)")
    workers = len(getattr(embedder, "_workers", [])) or 1
    print(f"ragcli: {embedder.model_id}, {config.n_threads} threads in {workers} llama.cpp context(s), "
          f"cpu_count {os.cpu_count()}")

    baseline = None
    workdir = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    if args.baseline_python.is_file():
        baseline = Baseline(args.baseline_python, texts, args.rounds, workdir)
        print(f"baseline: sentence-transformers, torch {baseline.info['torch']}, "
              f"{baseline.info['threads']} threads, max_seq_length {baseline.info['max_seq_length']}")
    else:
        print(f"baseline skipped: {args.baseline_python} not found "
              "(python -m venv .venv-bench && .venv-bench/bin/pip install torch==2.13.0 sentence-transformers)")

    embedder.embed(texts[:8])  # warm-up
    ours, theirs, ours_vectors, their_vectors = [], [], None, None
    for r in range(args.rounds):
        t = time.perf_counter()
        ours_vectors = embedder.embed(texts)
        ours.append(len(texts) / (time.perf_counter() - t))
        line = f"round {r + 1}: ragcli {ours[-1]:6.1f} chunks/s"
        if baseline:
            seconds, their_vectors = baseline.round()
            theirs.append(len(texts) / seconds)
            line += f"   sentence-transformers {theirs[-1]:6.1f} chunks/s   ratio {ours[-1] / theirs[-1]:.2f}"
        print(line + f"   (load {os.getloadavg()[0]:.1f})", flush=True)

    print(f"ragcli                 median {statistics.median(ours):6.1f}  best {max(ours):6.1f} chunks/s")
    if baseline:
        baseline.close()
        ratios = [a / b for a, b in zip(ours, theirs)]
        cos = (ours_vectors * their_vectors).sum(axis=1)
        print(f"sentence-transformers  median {statistics.median(theirs):6.1f}  best {max(theirs):6.1f} chunks/s")
        print(f"ratio ragcli / sentence-transformers: median {statistics.median(ratios):.2f} "
              f"(per round: {', '.join(f'{x:.2f}' for x in ratios)})")
        print(f"cosine agreement per chunk: mean {cos.mean():.5f}, min {cos.min():.5f}")


if __name__ == "__main__":
    main()
