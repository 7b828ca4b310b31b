"""Answer quality: does an answer say only what the cited notes say, and does it answer?

Runs the question set in ``bench/questions/answers.jsonl`` (answerable questions with a
reference answer and the facts it must carry, over the Obsidian help vault and
``examples/vault``, plus unanswerable ones) through ``rag ask``'s pipeline, once per model,
and scores three answers from each run:
- quotes:    the evidence alone (``rag ask --quotes``): the quotes' text;
- generated: what the model wrote from those quotes, unchecked;
- checked:   the answer paragraph: the sentences that passed the checks (or the quotes);
- shown:     everything `rag ask` prints above its sources: the numbered quotes, then the
             checked answer (the quotes are part of the answer: they come first, on purpose).
Baseline: the top search hit's text alone, for recall.

Figures (plain word overlap, as in the issue; content words, lower-cased, crude stems):
- support: share of the answer's content words found in the sources it cites (mean);
- recall: share of the reference answer's content words found in the answer (mean);
- facts: share of the reference's must-have facts found verbatim in the answer;
- invented numbers: answers holding a number that is in none of the sources given;
- refused: answerable questions answered "not covered"; answered: unanswerable ones that
  got an answer;
- time to first quote and to the first answer token (from the question), median and p90.

Usage (builds or reuses two indexes under --homes; the vault needs ../shared):
    python bench/bench_answers.py                       # the default model
    python bench/bench_answers.py --model qwen2.5-coder-0.5b-instruct --model qwen2.5-coder-1.5b-instruct
    python bench/bench_answers.py --limit 10 --verbose  # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

FALLBACK_PREFIX = "Your notes say: "  # how answers before wave 3 framed a quoted fallback
from ragcli.words import query_terms  # noqa: E402

SHARED = Path(os.path.abspath(ROOT / ".." / "shared"))
CORPORA = {"obsidian-help": SHARED / "corpora" / "obsidian-help" / "en", "examples": ROOT / "examples" / "vault"}
QUESTIONS = ROOT / "bench" / "questions" / "answers.jsonl"
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


def load_questions(limit: int | None) -> list[dict]:
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if CORPORA[r["corpus"]].is_dir()]
    if limit:
        by_kind: dict[tuple, list] = {}
        for r in rows:
            by_kind.setdefault((r["corpus"], r["answerable"]), []).append(r)
        rows = [r for group in by_kind.values() for r in group[:limit]]
    return rows


def build_homes(homes: Path) -> dict[str, Path]:
    from ragcli.config import load_config
    from ragcli.pipeline import index

    result = {}
    for name, folder in CORPORA.items():
        if not folder.is_dir():
            continue
        home = homes / name
        os.environ["RAG_HOME"] = str(home)
        t0 = time.perf_counter()
        report = index(load_config(), [folder])
        print(f"# index {name}: {report.files_indexed} indexed, {report.files_unchanged} unchanged "
              f"({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
        result[name] = home
    return result


def words(text: str) -> set[str]:
    return query_terms(text or "")


def share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(part) if part else 1.0


def numbers(text: str) -> set[str]:
    # leading zeros dropped: "6:00" says what "06:00" says
    return {(n.replace(",", "").rstrip(".").lstrip("0") or "0") for n in _NUMBER.findall(text or "")}


def score(row: dict, result, top_hit_text: str) -> dict:
    """Figures for the three answers of one question."""
    quotes = result.quotes or []
    source_text = "\n".join(f"{q.title} {q.heading} {q.context} {q.text}" for q in quotes)
    cited_text = "\n".join(f"{q.title} {q.heading} {q.context} {q.text}" for q in quotes
                           if q.n in set(result.cited)) or source_text
    quote_answer = " ".join(q.text for q in quotes)
    answers = {"quotes": (quote_answer, source_text), "generated": (result.generated or "", source_text),
               "checked": (result.text if result.covered else "", cited_text),
               "shown": ((quote_answer + " " + result.text) if result.covered else "", source_text)}
    ref = words(row["reference"])
    out = {"covered": result.covered, "baseline_recall": share(ref, words(top_hit_text)) if row["answerable"] else None}
    for mode, (text, sources) in answers.items():
        text = re.sub(r"\[\d+\]", "", text).replace(FALLBACK_PREFIX, "")  # our framing, not a claim
        invented = numbers(text) - numbers(sources) - numbers(row["question"])
        out[mode] = {"support": share(words(text), words(sources)) if text.strip() else None,
                     "recall": share(ref, words(text)) if row["answerable"] else None,
                     "facts": (sum(f.lower() in text.lower() for f in row["facts"]) / len(row["facts"])
                               if row["facts"] else None),
                     "invented": sorted(invented)}
    return out


def run_model(model: str | None, rows: list[dict], homes: dict[str, Path], verbose: bool,
              quotes_only: bool = False) -> dict:
    from ragcli.config import load_config
    from ragcli.generate import make_generator
    from ragcli.pipeline.answer import answer
    from ragcli.retrieve import Searcher

    overrides = {"llm_model": model} if model else {}
    generator = None
    results = []
    for corpus, home in homes.items():
        os.environ["RAG_HOME"] = str(home)
        config = load_config(overrides)
        if generator is None and not quotes_only:
            generator = make_generator(config)
        searcher = Searcher(config)
        for row in (r for r in rows if r["corpus"] == corpus):
            t0 = time.perf_counter()
            seen: dict[str, float] = {}
            result = answer(config, row["question"], generator=generator, searcher=searcher, quotes_only=quotes_only,
                            on_quotes=lambda _q: seen.setdefault("quotes", time.perf_counter() - t0),
                            on_token=lambda _t: seen.setdefault("token", time.perf_counter() - t0))
            hits = searcher.search(row["question"], 1, config.mode)
            figures = score(row, result, hits[0].chunk.text if hits else "")
            figures.update(id=row["id"], answerable=row["answerable"], first_quote_s=seen.get("quotes"),
                           first_token_s=seen.get("token"), dropped=len(result.dropped))
            results.append(figures)
            if verbose:
                print(f"\n## {row['id']} {row['question']}\n   ref: {row['reference']}\n   "
                      f"gen: {(result.generated or '').strip()[:300]}\n   out: {result.text[:300]}\n   "
                      f"dropped: {[d['reason'] for d in result.dropped]}", file=sys.stderr)
        searcher.close()
    name = generator.model_name if generator else (model or "(quotes only)")
    if generator is not None:
        generator.close()
    return {"model": name, "results": results}


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def summarize(run: dict) -> list[dict]:
    res = run["results"]
    answerable = [r for r in res if r["answerable"]]
    unanswerable = [r for r in res if not r["answerable"]]
    covered = [r for r in answerable if r["covered"]]
    times_q = sorted(r["first_quote_s"] for r in res if r["first_quote_s"] is not None)
    times_t = sorted(r["first_token_s"] for r in res if r["first_token_s"] is not None)
    rows = []
    for mode in ("quotes", "generated", "checked", "shown"):
        rows.append({
            "model": run["model"], "mode": mode,
            "support": mean(r[mode]["support"] for r in covered),
            "recall": mean(r[mode]["recall"] for r in covered),
            "facts": mean(r[mode]["facts"] for r in covered),
            "baseline_recall": mean(r["baseline_recall"] for r in covered),
            "invented_numbers": sum(bool(r[mode]["invented"]) for r in covered),
            "answers": len(covered),
            "refused": len(answerable) - len(covered), "answerable": len(answerable),
            "unanswerable_answered": sum(r["covered"] for r in unanswerable), "unanswerable": len(unanswerable),
            "first_quote_p50": statistics.median(times_q) if times_q else None,
            "first_token_p50": statistics.median(times_t) if times_t else None,
            "first_token_p90": times_t[int(0.9 * (len(times_t) - 1))] if times_t else None,
        })
    return rows


def fmt(v) -> str:
    return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", action="append", help="llm_model (a GGUF path or a known short name); repeat")
    ap.add_argument("--homes", type=Path, default=Path("/tmp/ragcli-bench-answers"))
    ap.add_argument("--limit", type=int, help="at most this many questions per corpus and kind")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", type=Path, help="also write every figure here")
    ap.add_argument("--quotes-only", action="store_true", help="no generation: score the evidence alone")
    args = ap.parse_args()
    rows = load_questions(args.limit)
    homes = build_homes(args.homes)
    print(f"# {len(rows)} questions ({sum(r['answerable'] for r in rows)} answerable) over {', '.join(homes)}; "
          f"load {os.getloadavg()[0]:.1f}")
    runs = [run_model(m, rows, homes, args.verbose, args.quotes_only) for m in (args.model or [None])]
    cols = ["model", "mode", "support", "recall", "facts", "baseline_recall", "invented_numbers", "answers",
            "refused", "answerable", "unanswerable_answered", "unanswerable", "first_quote_p50",
            "first_token_p50", "first_token_p90"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for run in runs:
        for row in summarize(run):
            print("| " + " | ".join(fmt(row[c]) for c in cols) + " |")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
