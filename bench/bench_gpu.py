"""The figures issue 21 asks of a GPU, in one run. Runs on a CPU build too (smaller, slower).

    python bench/bench_gpu.py [--notes 1000] [--chunks 4000] [--rounds 2] [--question "..."]

Prints, never asserts:
1. the backends llama.cpp was built with and the devices it sees (as `rag doctor` does);
2. ragcli's embedder on MDN chunk texts (batches of 128, as indexing sends them), with the
   tokens per llama.cpp call of ``--batches`` and ragcli's default (``--compare batch``), or
   flash attention on, off, llama.cpp's auto and ragcli's choice (``--compare flash``), rounds
   alternating so a busy machine hurts each alike; one-query latency for each; cosine of
   each against the first;
3. `rag index` of the first ``--notes`` MDN notes (copied to a temp folder), a new process
   in an empty index: wall seconds and chunks/s;
4. cold `rag search` and `rag ask` (new processes, no watcher): wall seconds, and from
   `ask --json` the retrieval time and the first token's delay after retrieval.

Models come from the bench cache (benchlib.MODELS_CACHE); the corpus is read by path only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ragcli.native import llama_first  # noqa: E402

llama_first()  # before numpy: a CUDA build of llama.cpp crashes otherwise (README, "GPU")

import numpy as np  # noqa: E402

from benchlib import CORPORA, rag, rag_env, warm_models  # noqa: E402

MDN = CORPORA / "mdn" / "files" / "en-us"
BATCH = 128  # chunks per embed call: what indexing sends (pipeline/indexing.py FLUSH_CHUNKS)


def backends_line() -> str:
    from ragcli.models.backend import describe_backends

    b = describe_backends()
    devices = "; ".join(d.label() for d in b.devices) or "none listed"
    return f"built: {', '.join(b.built)}; devices: {devices}; gpu offload: {b.gpu_offload}"


def mdn_notes(n: int) -> list[Path]:
    return sorted(MDN.rglob("*.md"))[:n]


def chunk_texts(env: dict, notes: list[Path], limit: int) -> list[str]:
    """The chunk texts ragcli's own parser and chunker make of these notes."""
    from ragcli.config import load_config
    from ragcli.embed import make_embedder
    from ragcli.ingest.chunk import chunk_document
    from ragcli.ingest.read import read_and_parse

    config = load_config(env=env)
    embedder = make_embedder(config)
    texts: list[str] = []
    try:
        for path in notes:
            try:
                doc = read_and_parse(path, config.max_file_mb << 20)
            except Exception:  # noqa: BLE001 - a note the parser refuses is not a benchmark's business
                continue
            chunks = chunk_document(doc, embedder.count_tokens, config.chunk_tokens, config.chunk_overlap)
            texts += [c.embed_text() for c in chunks]
            if len(texts) >= limit:
                break
    finally:
        embedder.close()
    return texts[:limit]


def embed_variants(compare: str, batches: list[int]) -> dict[str, dict]:
    """LlamaEmbedder arguments of each variant; the first is the one the others are set against."""
    from ragcli.embed.llama import FLASH_AUTO, FLASH_OFF, FLASH_ON

    if compare == "flash":
        return {"on": {"flash_attn": FLASH_ON}, "off": {"flash_attn": FLASH_OFF},
                "auto": {"flash_attn": FLASH_AUTO}, "ragcli": {}}
    return {f"{b} tokens": {"batch_tokens": b} for b in batches} | {"ragcli's default": {}}


def embed_figures(env: dict, texts: list[str], rounds: int, variants: dict[str, dict]) -> None:
    from ragcli.config import load_config
    from ragcli.embed.builtin import resolve_embed_model
    from ragcli.embed.llama import FLASH_NAMES, LlamaEmbedder

    config = load_config(env=env)
    path = resolve_embed_model(config).path
    embedders = {name: LlamaEmbedder(path, model_id="bench", n_threads=config.n_threads,
                                     n_gpu_layers=config.n_gpu_layers, **kwargs)
                 for name, kwargs in variants.items()}
    first = next(iter(embedders))
    for name, e in embedders.items():
        print(f"{name}: flash attention {FLASH_NAMES[e.flash_attn]}, {e._batch_tokens} tokens a call, "
              f"{len(e._workers)} context(s), n_gpu_layers {e.n_gpu_layers}")
    print(f"embedder: {path.name}")
    rates: dict[str, list[float]] = {n: [] for n in variants}
    query: dict[str, list[float]] = {n: [] for n in variants}
    vectors: dict[str, np.ndarray] = {}
    for e in embedders.values():
        e.embed(texts[:8])  # warm-up (allocations, GPU kernels)
    for _ in range(rounds):
        for name, e in embedders.items():
            started = time.perf_counter()
            out = [e.embed(texts[i:i + BATCH]) for i in range(0, len(texts), BATCH)]
            rates[name].append(len(texts) / (time.perf_counter() - started))
            vectors[name] = np.vstack(out)
            for q in texts[:20]:
                started = time.perf_counter()
                e.embed_queries([q[:200]])
                query[name].append(time.perf_counter() - started)
    base = statistics.median(rates[first])
    print(f"| variant | chunks/s (batches of {BATCH}, {len(texts)} chunks) | x '{first}' | "
          f"one query, median ms | min cosine vs '{first}' |")
    print("|---|---|---|---|---|")
    for name in variants:
        cos = float(np.min(np.sum(vectors[name] * vectors[first], axis=1)))
        print(f"| {name} | {' / '.join(f'{r:.1f}' for r in rates[name])} | "
              f"{statistics.median(rates[name]) / base:.2f} | {statistics.median(query[name]) * 1000:.1f} | "
              f"{cos:.6f} |")
    for e in embedders.values():
        e.close()


def question_for(notes: list[Path]) -> str:
    """A question the slice answers: about the title of a note from its middle."""
    for path in notes[len(notes) // 2:] + notes:
        match = re.search(r"^title:\s*\"?(.+?)\"?\s*$", path.read_text(errors="replace"), re.M)
        if match:
            return f"What is {match.group(1)}?"
    return "What is HTML?"


def index_figures(env: dict, notes: list[Path], workdir: Path) -> None:
    vault = workdir / "mdn-slice"
    for path in notes:
        target = vault / path.relative_to(MDN)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    run = rag(["index", str(vault), "--json"], env)
    if run.rc != 0:
        print(f"rag index failed ({run.rc}): {run.err.decode(errors='replace')[-2000:]}")
        return
    report = run.json()
    chunks = report["chunks_added"]
    print(f"rag index, {len(notes)} MDN notes, {chunks} chunks: {run.seconds:.1f} s wall "
          f"({chunks / run.seconds:.0f} chunks/s), {report['seconds']:.1f} s reported, peak {run.peak_mb:.0f} MB")


def query_figures(env: dict, question: str, rounds: int) -> None:
    env = dict(env, RAG_DAEMON="off")  # cold: this process does everything
    print(f"question: {question}")
    for _ in range(rounds):
        search = rag(["search", question, "--json"], env)
        ask = rag(["ask", question, "--json"], env)
        if search.rc or ask.rc:
            print(f"search rc {search.rc}, ask rc {ask.rc}: {ask.err.decode(errors='replace')[-1000:]}")
            return
        t = ask.json().get("timings", {})
        first, retrieve = t.get("model_first_token_s"), t.get("quotes_s") or t.get("retrieve_s")
        after = f"{first - retrieve:.3f} s" if first is not None and retrieve is not None else "n/a"
        print(f"cold rag search {search.seconds:.2f} s; cold rag ask {ask.seconds:.2f} s "
              f"(retrieval {t.get('retrieve_s')}, the model's first token {first} s from the call, {after} "
              f"after the quotes were chosen; first sentence shown {t.get('first_token_s')})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=1000, help="MDN notes for `rag index`")
    parser.add_argument("--chunks", type=int, default=4000, help="chunk texts for the embedder figures")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--question", default=None,
                        help="for search/ask (default: 'What is <title>?' of a note in the slice, so it is covered)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["embed", "index", "query"])
    parser.add_argument("--compare", choices=["flash", "batch"], default="batch",
                        help="embedder variants: flash-attention settings, or tokens per call")
    parser.add_argument("--batches", default="512,2048,4096,8192", help="tokens per call, for --compare batch")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="bench-gpu-"))
    env = rag_env(workdir / "home")
    os.environ.update({k: v for k, v in env.items() if k.startswith("RAG_")})
    print(f"llama.cpp: {backends_line()}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    warm_models(env)
    notes = mdn_notes(args.notes)
    try:
        if "embed" not in args.skip:
            variants = embed_variants(args.compare, [int(b) for b in args.batches.split(",")])
            embed_figures(env, chunk_texts(env, notes, args.chunks), args.rounds, variants)
        if "index" not in args.skip:
            index_figures(env, notes, workdir)
        if "query" not in args.skip and "index" not in args.skip:
            query_figures(env, args.question or question_for(notes), args.rounds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
