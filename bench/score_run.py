"""Score a TREC run file against BEIR qrels, independently of ragcli.

    python bench/score_run.py RUN_FILE QRELS_TSV [--json]

A second implementation on purpose (nothing is imported from ragcli): it reads the run as
trec_eval does, ordering each query's documents by score (descending, ties broken by
document id descending) and ignoring the rank column, then computes nDCG@10 (trec_eval's
ndcg_cut_10: gain = judged relevance, ideal ranking built from the qrels), recall@10,
recall@100 and MRR@10 (reciprocal rank of the first relevant document within 10, else 0),
averaged over the queries in the qrels. A judged query missing from the run scores 0, as
with ``trec_eval -c``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict


def read_qrels(path: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            fields = line.split()
            if len(fields) == 3 and fields[2].lstrip("-").isdigit():
                qrels[fields[0]][fields[1]] = int(fields[2])  # BEIR: qid docid rel
            elif len(fields) == 4 and fields[3].lstrip("-").isdigit():
                qrels[fields[0]][fields[2]] = int(fields[3])  # TREC: qid 0 docid rel
    return dict(qrels)


def read_run(path: str) -> dict[str, list[str]]:
    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise SystemExit(f"{path}:{number}: expected 6 fields, got {len(fields)}")
            qid, _q0, doc, _rank, score, _tag = fields
            rows[qid].append((float(score), doc))
    ordered = {}
    for qid, pairs in rows.items():
        pairs.sort(key=lambda p: (p[0], p[1]), reverse=True)  # trec_eval: score, then docno, both desc
        ordered[qid] = [doc for _score, doc in pairs]
    return ordered


def dcg(gains: list[int]) -> float:
    total = 0.0
    for position, gain in enumerate(gains, start=1):
        total += gain / math.log(position + 1, 2)
    return total


def metrics(docs: list[str], judged: dict[str, int]) -> dict[str, float]:
    relevant = {doc for doc, rel in judged.items() if rel > 0}
    gains = [max(judged.get(doc, 0), 0) for doc in docs[:10]]
    ideal = sorted((rel for rel in judged.values() if rel > 0), reverse=True)[:10]
    ideal_dcg = dcg(ideal)
    first = next((i for i, doc in enumerate(docs[:10]) if doc in relevant), None)
    return {
        "ndcg@10": dcg(gains) / ideal_dcg if ideal_dcg else 0.0,
        "recall@10": len(relevant & set(docs[:10])) / len(relevant) if relevant else 0.0,
        "recall@100": len(relevant & set(docs[:100])) / len(relevant) if relevant else 0.0,
        "mrr@10": 1.0 / (first + 1) if first is not None else 0.0,
    }


def score(run_path: str, qrels_path: str) -> dict[str, float]:
    qrels, run = read_qrels(qrels_path), read_run(run_path)
    judged = [q for q in qrels if any(rel > 0 for rel in qrels[q].values())]
    per_query = [metrics(run.get(q, []), qrels[q]) for q in judged]
    result = {name: sum(m[name] for m in per_query) / len(per_query) for name in per_query[0]} if per_query else {}
    result["queries"] = len(per_query)
    result["queries_in_run"] = sum(1 for q in judged if q in run)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("qrels")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = score(args.run, args.qrels)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, value in result.items():
            print(f"{name:12s} {value:.4f}" if isinstance(value, float) else f"{name:12s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
