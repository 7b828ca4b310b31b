"""Can the generator itself tell, in the gate's grey zone, a question its passages answer from one
they do not? Measured on a `bench/gate_features.py` dump, no index needed (issue 19, item 4).

The grey zone: questions the "not covered" gate refuses today or shows as "may answer it". For
each, the model reads the question beside a passage (the top hits' text, then the gate's quotes
joined) and one of two scores is kept per passage:

- ``judge``: P("Yes") against P("No") at the first token of the answer to "Does the passage answer
  this question? Answer Yes or No." (the chat template, the logits after the prompt);
- ``pmi``: how much the passage raises the model's mean log-probability of the question's tokens
  (query likelihood with the passage, less without it).

It prints each question's scores as they come, then per half the AUC of answerable against
unanswerable questions (0.5: no better than chance) for the best passage, the top hit and the
quotes.

    python bench/judge_gate.py --feats /tmp/s8-feats.json --out judge.json
    python bench/judge_gate.py --feats F.json --model qwen2.5-coder-1.5b-instruct --hits 0 --id pp-02 ...
    python bench/judge_gate.py --load judge.json            # the figures again

On a loaded 2-core machine the 0.5B model reads ~20-30 prompt tokens a second: 6 to 13 s a
question for two passages of 700 characters, the 1.5B 10 to 25 s for one.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SYSTEM = ("You check whether a passage from someone's notes answers their question. "
          "The notes may be on a related topic without answering it.")


def grey(feats: list[dict]) -> list[dict]:
    """Refused today, or shown as "may answer it": where a judge could change the verdict."""
    return [f for f in feats if not f["covered"] or f["tentative"]]


def passages(f: dict, hits: int, chars: int) -> list[str]:
    joined = "\n".join(f["quote_plain"])
    return [p[:chars] for p in f["hit_texts"][:hits] + ([joined] if joined else [])]


def load_model(name: str, threads: int, logits_all: bool):
    """The generator ragcli would load for ``name`` (a joined model's short name, or empty for the
    default), opened here with the logits this measurement reads."""
    from ragcli.config import load_config
    from ragcli.models.llama import load_llama_cpp
    from ragcli.models.resolve import resolve_llm_model

    if name:
        os.environ["RAG_LLM_MODEL"] = name
    path = resolve_llm_model(load_config()).path
    llama_cpp = load_llama_cpp()
    return llama_cpp.Llama(model_path=str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads,
                           n_batch=256, logits_all=logits_all, verbose=False), path


def last_logits(llm, tokens: list[int]):
    import numpy as np

    llm.reset()
    llm.eval(tokens)
    return np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))  # the last position's


def judge_score(llm, question: str, passage: str) -> float:
    """P(Yes) / (P(Yes) + P(No)) at the answer's first token, each as its likeliest spelling."""
    prompt = (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\nQuestion: {question}\n\n"
              f"Passage:\n{passage}\n\nDoes the passage answer this question? Answer Yes or No.<|im_end|>\n"
              "<|im_start|>assistant\n")  # Qwen2.5's chat template, the only family measured
    logits = last_logits(llm, llm.tokenize(prompt.encode(), add_bos=False, special=True))

    def likeliest(*spellings: str) -> float:
        return max(float(logits[llm.tokenize(w.encode(), add_bos=False, special=False)[0]]) for w in spellings)
    yes, no = likeliest("Yes", " Yes", "yes"), likeliest("No", " No", "no")
    return 1 / (1 + math.exp(no - yes))


def question_logp(llm, prefix: str, question: str) -> float:
    import numpy as np

    a = llm.tokenize(prefix.encode(), add_bos=True, special=False)
    b = llm.tokenize((" " + question).encode(), add_bos=False, special=False)
    llm.reset()
    llm.eval(a + b)
    scores = np.array(llm.scores[len(a) - 1: len(a) + len(b) - 1])
    scores = scores - scores.max(axis=1, keepdims=True)
    logp = scores[np.arange(len(b)), b] - np.log(np.exp(scores).sum(axis=1))
    return float(logp.mean())


def pmi_score(llm, question: str, passage: str) -> float:
    with_it = question_logp(llm, f"Notes:\n{passage}\n\nQuestion from a reader of these notes:", question)
    return with_it - question_logp(llm, "Question from a reader of the notes:", question)


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def summary(rows: list[dict]) -> None:
    views = {"best passage": max, "top hit": lambda s: s[0], "quotes": lambda s: s[-1]}
    for split in ("tune", "check", "all"):
        group = [r for r in rows if r["scores"] and split in ("all", r["split"])]
        pos = [r for r in group if r["answerable"]]
        neg = [r for r in group if not r["answerable"]]
        figures = []
        for name, view in views.items():
            a = auc([view(r["scores"]) for r in pos], [view(r["scores"]) for r in neg])
            figures.append(f"{name} {a:.2f}" if a is not None else f"{name} -")
        print(f"{split:5s} answerable {len(pos):3d} unanswerable {len(neg):2d}  AUC: " + ", ".join(figures))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--feats", type=Path, default=Path("/tmp/s8-feats.json"), help="gate_features.py --out")
    ap.add_argument("--method", choices=("judge", "pmi"), default="judge")
    ap.add_argument("--model", default="", help="a joined model's short name (default: ragcli's default)")
    ap.add_argument("--hits", type=int, default=1, help="top hits judged, before the quotes")
    ap.add_argument("--chars", type=int, default=700, help="each passage cut to this")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--home", default="/tmp/rb7-gateA/shared/obsidian-help", help="RAG_HOME (models_dir)")
    ap.add_argument("--id", action="append", help="only these questions")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--load", type=Path)
    args = ap.parse_args()
    if args.load:
        summary(json.loads(args.load.read_text()))
        return
    os.environ.setdefault("RAG_HOME", args.home)
    todo = [f for f in grey(json.loads(args.feats.read_text())) if not args.id or f["id"] in args.id]
    llm, path = load_model(args.model, args.threads, logits_all=args.method == "pmi")
    score = judge_score if args.method == "judge" else pmi_score
    rows, started = [], time.perf_counter()
    for f in todo:
        t = time.perf_counter()
        scores = [score(llm, f["question"], p) for p in passages(f, args.hits, args.chars)]
        rows.append({k: f[k] for k in ("id", "set", "split", "answerable", "covered", "tentative", "best")}
                    | {"cos0": (f["cos"] or [0.0])[0], "scores": scores, "seconds": time.perf_counter() - t})
        print(f"{f['id']:7s} {'A' if f['answerable'] else 'U'} {[round(s, 2) for s in scores]} "
              f"{rows[-1]['seconds']:.1f}s", flush=True)
    print(f"{path.name}, {args.method}: {len(rows)} questions in {time.perf_counter() - started:.0f} s")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    summary(rows)


if __name__ == "__main__":
    main()
