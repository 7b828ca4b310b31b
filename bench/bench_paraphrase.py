"""Find the right note when the question uses other words than the note (issue 13).

    python bench/bench_paraphrase.py                  # every mode and variant, dev/test columns
    python bench/bench_paraphrase.py --home DIR       # use the vault index under DIR as it is
    python bench/bench_paraphrase.py --repeats 3      # time each question 3 times
    python bench/bench_paraphrase.py --latency 10     # warm p95, before vs shipped, interleaved
    python bench/bench_paraphrase.py --only before --only spelling   # some variants only

Question sets (``bench/questions``): ``paraphrase.jsonl`` (99 questions written in the
user's words, avoiding the note's) and, as a check that matched wording still works, the
answerable ``obsidian-help`` questions of ``answers.jsonl``, and those again with one typing
slip each ("slip": two letters of the longest word swapped). A question hits when its
``path`` or one of its ``also`` paths is among the first k *notes* (chunks are folded into
their note, in rank order).

Tuning rule: the paraphrase set is split by id, odd ids = dev (the only half looked at
while choosing), even ids = test (reported, never tuned on). The vault index is built once
into a cached folder (``$TMPDIR/ragcli-bench-paraphrase``) and reused. Latency: warm
queries of the whole paraphrase set per variant, in this one process, so the ratio against
the first (shipped-before) variant is fair. Nothing here asserts: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "corpora"
VAULT = SHARED / "obsidian-help" / "en"
QUESTIONS = ROOT / "bench" / "questions"

from ragcli.config import load_config  # noqa: E402
from fusion_variants import Variant  # noqa: E402
from ragcli.retrieve import Fusion, Searcher  # noqa: E402

DEPTH = 50  # chunks asked for per question; notes are folded from them


def load_questions() -> dict[str, list[dict]]:
    sets: dict[str, list[dict]] = {"para-dev": [], "para-test": [], "matched": []}
    # + "slipped": the matched questions with one typing slip each (the spelling fallback)
    for line in (QUESTIONS / "paraphrase.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            number = int(q["id"].split("-")[-1])
            sets["para-dev" if number % 2 else "para-test"].append(q)
    for line in (QUESTIONS / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if q.get("corpus") == "obsidian-help" and q.get("answerable"):
                sets["matched"].append({"id": q["id"], "question": q["question"], "path": q["path"], "also": []})
    sets["slipped"] = [{**q, "question": slip(q["question"])} for q in sets["matched"]]
    return sets


def slip(text: str) -> str:
    """The text with one typing slip: the two middle letters of its longest word (6+ letters)
    swapped, as a fast typist does ("attachment" -> "attahcment"). Deterministic."""
    words = re.findall(r"[A-Za-z]{6,}", text)
    if not words:
        return text
    word = max(words, key=len)
    i = len(word) // 2
    return text.replace(word, word[: i - 1] + word[i] + word[i - 1] + word[i + 1:], 1)


def note_ranking(hits, root: Path) -> list[str]:
    notes: list[str] = []
    for hit in hits:
        rel = os.path.relpath(hit.chunk.path, root)
        if rel not in notes:
            notes.append(rel)
    return notes


def score(notes: list[str], question: dict) -> tuple[float, float, float]:
    """(hit@1, hit@5, reciprocal rank within the first 10 notes)."""
    wanted = {question["path"], *question.get("also", [])}
    rank = next((i for i, n in enumerate(notes[:10]) if n in wanted), None)
    if rank is None:
        return 0.0, 0.0, 0.0
    return float(rank == 0), float(rank < 5), 1.0 / (rank + 1)


def vault_config(home: Path | None):
    from ragcli.pipeline import index

    if home is not None:
        return load_config({"data_dir": str(home)})
    home = Path(tempfile.gettempdir()) / "ragcli-bench-paraphrase"
    config = load_config({"data_dir": str(home)})
    started = time.monotonic()
    report = index(config, [VAULT])
    print(f"vault {VAULT}: indexed/updated in {time.monotonic() - started:.1f}s "
          f"({report.files_indexed} files changed, {report.embedded} chunks embedded)", file=sys.stderr)
    return config


BEFORE = Variant(full_keyword_cover=0.0, note_weight=0.0, respell=False)  # what issue 13 started from


def variants() -> list[tuple[str, str, Fusion]]:
    """(label, mode, fusion): the baseline first, then one idea at a time, then the default."""
    return [
        ("keyword", "keyword", BEFORE),
        ("vector (before)", "vector", BEFORE),
        ("hybrid (before)", "hybrid", BEFORE),
        ("hybrid: RRF k=60", "hybrid", replace(BEFORE, method="rrf")),
        ("hybrid: alpha 0.6", "hybrid", replace(BEFORE, alpha=0.6)),
        ("hybrid: cosines scaled on own top n", "hybrid", replace(BEFORE, vector_scale="own")),
        ("hybrid: keyword weight by cover", "hybrid", replace(BEFORE, full_keyword_cover=0.5)),
        ("hybrid: note centroid 0.5", "hybrid", replace(BEFORE, note_weight=0.5)),
        ("vector: note centroid 0.5", "vector", Fusion()),
        ("hybrid: cover + centroid", "hybrid", Fusion(respell=False)),
        ("hybrid: + spelling-slip fallback *", "hybrid", Fusion()),
    ]


def run(config, questions: dict[str, list[dict]], repeats: int, only: list[str] | None = None) -> None:
    searcher = Searcher(config)
    files, chunks = searcher.index.counts()
    print(f"index {config.index_dir}: {files} files, {chunks} chunks; dev = odd ids "
          f"({len(questions['para-dev'])}), test = even ids ({len(questions['para-test'])}), "
          f"matched = answers.jsonl ({len(questions['matched'])})")
    header = (f"{'variant':36s} | {'dev h@1':>7s} {'h@5':>5s} {'MRR':>5s} | {'test h@1':>8s} {'h@5':>5s} "
              f"{'MRR':>5s} | {'all h@5':>7s} | {'matched h@5':>11s} {'MRR':>5s} | {'slip h@5':>8s} | "
              f"{'p50 ms':>6s} {'p95 ms':>6s}")
    print(header)
    print("-" * len(header))
    searcher.search("warm up", k=10, mode="hybrid")
    base_p95 = None
    try:
        for label, mode, fusion in variants():
            if only and not any(word in label for word in only):
                continue
            searcher.fusion = fusion
            figures: dict[str, tuple[float, float, float]] = {}
            times: list[float] = []
            for name, qs in questions.items():
                sums = [0.0, 0.0, 0.0]
                for q in qs:
                    for _ in range(repeats if name.startswith("para") else 1):
                        t0 = time.perf_counter()
                        hits = searcher.search(q["question"], k=DEPTH, mode=mode, candidates=DEPTH)
                        times.append((time.perf_counter() - t0) * 1000)
                    for i, v in enumerate(score(note_ranking(hits, VAULT), q)):
                        sums[i] += v
                figures[name] = tuple(s / max(len(qs), 1) for s in sums)
            times.sort()
            p50, p95 = statistics.median(times), times[int(len(times) * 0.95) - 1]
            base_p95 = base_p95 or p95
            dev, test, matched = figures["para-dev"], figures["para-test"], figures["matched"]
            n_dev, n_test = len(questions["para-dev"]), len(questions["para-test"])
            all5 = (dev[1] * n_dev + test[1] * n_test) / (n_dev + n_test)
            print(f"{label:36s} | {dev[0]:7.3f} {dev[1]:5.3f} {dev[2]:5.3f} | {test[0]:8.3f} {test[1]:5.3f} "
                  f"{test[2]:5.3f} | {all5:7.3f} | {matched[1]:11.3f} {matched[2]:5.3f} | {figures['slipped'][1]:8.3f} "
                  f"| {p50:6.1f} {p95:6.1f}",
                  flush=True)
    finally:
        searcher.close()
    print("* shipped default. Latency: every search of the variant (k=50), warm, one process.")


def latency(config, repeats: int) -> None:
    """Warm query latency, before vs shipped, on bench_eval's vault queries (k=10, as `rag
    search`), the two interleaved query by query so both see the same machine load."""
    from bench_eval import VAULT_QUERIES

    searcher = Searcher(config)
    times: dict[str, list[float]] = {"before": [], "after": []}
    try:
        searcher.search("warm up", k=10, mode="hybrid")
        for _ in range(repeats):
            for query in VAULT_QUERIES:
                for name, fusion in (("before", BEFORE), ("after", Fusion())):
                    searcher.fusion = fusion
                    t0 = time.perf_counter()
                    searcher.search(query, k=10, mode="hybrid")
                    times[name].append((time.perf_counter() - t0) * 1000)
    finally:
        searcher.close()
    p95 = {}
    for name, values in times.items():
        values.sort()
        p95[name] = values[max(int(len(values) * 0.95) - 1, 0)]
        print(f"hybrid warm query, {name:6s}: p50 {statistics.median(values):6.1f} ms, p95 {p95[name]:6.1f} ms "
              f"over {len(values)} queries (k=10)")
    print(f"p95 after / before: {p95['after'] / p95['before']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None, help="use the index under this data dir as it is")
    parser.add_argument("--repeats", type=int, default=1, help="times each paraphrase question is timed")
    parser.add_argument("--only", action="append", metavar="TEXT",
                        help="only the variants whose label holds TEXT (repeatable); the first one "
                             "run is the latency baseline")
    parser.add_argument("--latency", type=int, default=0, metavar="N",
                        help="only warm query latency, before vs shipped, N rounds of the vault queries")
    args = parser.parse_args()
    config = vault_config(args.home)
    if args.latency:
        latency(config, args.latency)
    else:
        run(config, load_questions(), args.repeats, args.only)


if __name__ == "__main__":
    main()
