"""Calibrate the "not covered" gate and the part floor on questions in users' own words.

For every question of the chosen sets, retrieval and evidence only (no model): the best
quote's score, the best hit's cosine, and for questions of several parts each part's best
score. Then, for a grid of floors, how many answerable questions would be refused (or shown
as "may answer it"), and how many unanswerable ones would still be refused.

Sets (bench/questions/): answers.jsonl (99: 84 answerable, 15 not), paraphrase.jsonl (99
answerable, in other words than the notes'), and any of multipart/howto/unanswerable_users
that exist; ``--split tune`` keeps the questions marked for tuning, ``--split check`` the rest.

    python bench/calibrate_gate.py --homes /tmp/rag-bench-homes
    python bench/calibrate_gate.py --split check --floor 0.51 --tentative 0.40 --strong 0.50
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from bench_answers import CORPORA, build_homes  # noqa: E402

SETS = ("answers", "paraphrase", "multipart", "howto", "unanswerable_users")


def load(split: str | None, sets=SETS) -> list[dict]:
    rows = []
    for name in sets:
        path = ROOT / "bench" / "questions" / f"{name}.jsonl"
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            row.setdefault("corpus", "obsidian-help")
            row.setdefault("answerable", True)
            row["set"] = name
            if split and row.get("split", split) != split:
                continue
            if CORPORA.get(row["corpus"], Path("/nonexistent")).is_dir():
                rows.append(row)
    return rows


def features(rows: list[dict], homes: dict[str, Path]) -> list[dict]:
    from ragcli.config import load_config
    from ragcli.pipeline.answer import PART_FLOOR, _idf, _search_parts, _top_cosine
    from ragcli.retrieve import Searcher
    from ragcli.retrieve.evidence import select_evidence
    from ragcli.retrieve.parts import question_parts
    from ragcli.words import asks_figure, holds_figure
    from ragcli.retrieve.relevance import relevant, unheard_words, unknown_names

    feats = []
    for corpus, home in homes.items():
        os.environ["RAG_HOME"] = str(home)
        config = load_config()
        searcher = Searcher(config)
        for row in (r for r in rows if r["corpus"] == corpus):
            q = row["question"]
            hits = _search_parts(searcher, q, config)
            unknown = unknown_names(q, searcher.index.keyword_df)
            ev = select_evidence(q, hits, searcher.embedder.embed, _idf(searcher), parts=question_parts(q),
                                 part_floor=PART_FLOOR)
            feats.append({"id": row.get("id"), "set": row["set"], "answerable": row["answerable"],
                          "cosine": _top_cosine(hits), "relevant": relevant(q, hits),
                          "unknown": unknown, "unheard": unheard_words(q, searcher.index.keyword_df),
                          "figure_missing": asks_figure(q) and not any(holds_figure(x.text, q) for x in ev.quotes),
                          "quote": max((x.score for x in ev.quotes), default=0.0),
                          "parts": ev.parts, "part_scores": ev.part_scores, "missing": ev.missing,
                          "part_answers": [p.get("answer") for p in row.get("parts", [])]})
        searcher.close()
    return feats


def refused(f: dict, floor: float, tentative: float, strong: float) -> bool:
    """The rule of ragcli.pipeline.answer.covers (and the relevance gate before it), with other floors."""
    if not f["relevant"]:
        return True
    if f["quote"] >= floor:
        return False
    return (f["quote"] < tentative or f["cosine"] < strong or bool(f["unknown"]) or bool(f.get("unheard"))
            or f["figure_missing"])


def report(feats: list[dict], floor: float, tentative: float, strong: float) -> None:
    for name in SETS:
        group = [f for f in feats if f["set"] == name]
        if not group:
            continue
        pos = [f for f in group if f["answerable"]]
        neg = [f for f in group if not f["answerable"]]
        print(f"{name:20s} answerable refused {sum(refused(f, floor, tentative, strong) for f in pos)}/{len(pos)}"
              f"  tentative {sum(not refused(f, floor, tentative, strong) and f['quote'] < floor for f in pos)}"
              f"  unanswerable refused {sum(refused(f, floor, tentative, strong) for f in neg)}/{len(neg)}")


def grid(feats: list[dict]) -> None:
    pos = [f for f in feats if f["answerable"]]
    neg = [f for f in feats if not f["answerable"]]
    rows = []
    for floor, tentative, strong in itertools.product([0.45, 0.48, 0.51, 0.54], [0.30, 0.35, 0.40, 0.43, 0.46],
                                                      [0.40, 0.45, 0.50, 0.55, 0.60, 0.65]):
        if tentative > floor:
            continue
        rp = sum(refused(f, floor, tentative, strong) for f in pos)
        rn = sum(refused(f, floor, tentative, strong) for f in neg)
        rows.append((rp, -rn, floor, tentative, strong))
    rows.sort()
    print(f"# {len(pos)} answerable, {len(neg)} unanswerable; rules refusing >= 80% of the unanswerable:")
    print("| answerable refused | unanswerable refused | floor | tentative | strong hit |")
    print("|---|---|---|---|---|")
    shown = 0
    for rp, rn, floor, tentative, strong in rows:
        if -rn >= 0.8 * len(neg) and shown < 12:
            print(f"| {rp} | {-rn} | {floor} | {tentative} | {strong} |")
            shown += 1


def auc(pos: list[float], neg: list[float]) -> float:
    pairs = [(1.0 if a > b else 0.5 if a == b else 0.0) for a in pos for b in neg]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def separation(feats: list[dict]) -> None:
    """How well each feature tells a set's answerable questions from the unanswerable ones
    (AUC: 0.5 is chance)."""
    neg = [f for f in feats if not f["answerable"]]
    for name in SETS:
        pos = [f for f in feats if f["set"] == name and f["answerable"]]
        if pos and neg:
            def of(key, f):
                return not f.get(key) if key == "unheard" else f[key]
            scores = [auc([of(k, f) for f in pos], [of(k, f) for f in neg]) for k in ("quote", "cosine", "unheard")]
            print(f"AUC vs unanswerable, {name:18s} best quote {scores[0]:.2f}  top cosine {scores[1]:.2f}"
                  f"  no unheard word {scores[2]:.2f}")


def parts_report(feats: list[dict], part_floor: float) -> None:
    """Multi-part questions: parts found, and whether the covered/uncovered ones fall either side."""
    multi = [f for f in feats if f["part_answers"]]
    if not multi:
        return
    found = sum(len(f["parts"]) == len(f["part_answers"]) for f in multi)
    print(f"multipart: {found}/{len(multi)} questions split into as many parts as the reference")
    covered = [s for f in multi if len(f["parts"]) == len(f["part_answers"])
               for s, a in zip(f["part_scores"], f["part_answers"]) if a is not None]
    missing = [s for f in multi if len(f["parts"]) == len(f["part_answers"])
               for s, a in zip(f["part_scores"], f["part_answers"]) if a is None]
    print(f"  covered parts under the floor {part_floor}: {sum(s < part_floor for s in covered)}/{len(covered)};"
          f" uncovered parts over it: {sum(s >= part_floor for s in missing)}/{len(missing)}")
    said = [(p in f["missing"], a is None) for f in multi if len(f["parts"]) == len(f["part_answers"])
            for p, a in zip(f["parts"], f["part_answers"])]
    print(f"  said missing (floor and figure rule): {sum(m and n for m, n in said)} of {sum(n for _m, n in said)}"
          f" uncovered parts, {sum(m and not n for m, n in said)} of {sum(not n for _m, n in said)} covered ones")
    for f in multi:
        if len(f["parts"]) == len(f["part_answers"]):
            for p, s, a in zip(f["parts"], f["part_scores"], f["part_answers"]):
                print(f"    {f['id']} {'UNCOVERED' if a is None else 'covered  '} {s:.3f} "
                      f"{'said missing' if p in f['missing'] else ''} {p}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--homes", type=Path, default=Path("/tmp/rag-bench-homes"))
    ap.add_argument("--split", choices=["tune", "check"])
    ap.add_argument("--floor", type=float)
    ap.add_argument("--tentative", type=float)
    ap.add_argument("--strong", type=float)
    ap.add_argument("--dump", type=Path, help="write the features as JSON lines")
    ap.add_argument("--sets", nargs="+", choices=SETS, default=SETS, help="the question sets to read")
    args = ap.parse_args()
    from ragcli.pipeline import answer as a

    feats = features(load(args.split, args.sets), build_homes(args.homes))
    if args.dump:
        args.dump.write_text("".join(json.dumps(f) + "\n" for f in feats))
    floor = args.floor if args.floor is not None else a.EVIDENCE_FLOOR
    tentative = args.tentative if args.tentative is not None else a.TENTATIVE_FLOOR
    strong = args.strong if args.strong is not None else a.STRONG_HIT
    print(f"# floor {floor}, tentative {tentative}, strong hit {strong}")
    report(feats, floor, tentative, strong)
    grid(feats)
    separation(feats)
    parts_report(feats, a.PART_FLOOR)


if __name__ == "__main__":
    main()
