"""What refuses each question, and whether its note was among the hits (issue 19).

Every question of the chosen sets over the help vault and examples/vault is answered quotes-only
through ``pipeline.answer``; the gate's inputs are recorded by wrapping ``answer.covers`` (a question
refused before it, by the relevance pre-gate, never reaches it) and ``answer.select_evidence`` (the
hits the evidence reads). Prints, for answerable and unanswerable questions apart, how many are shown
plainly, shown as "may answer it", and refused by each rule, and for each set how often the expected
note is among the hits read and among the quotes shown.

    python bench/refusal_causes.py --homes /tmp/rb17 [--set paraphrase --set users ...] [--out rows.jsonl]

``--homes``: the folder bench_answers2.py indexed the vaults under (``<homes>/shared/<corpus>``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

from bench_answers2 import SETS as ALL_SETS  # bench/, the script's own folder

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
QUESTIONS = ROOT / "bench" / "questions"
SETS = {name: file for name, file in ALL_SETS.items() if name not in ("reports", "shelf")}  # the vaults' sets


def cause(row: dict) -> str:
    if row["covered"]:
        return "shown, may answer it" if row["tentative"] else "shown"
    if "best" not in row:
        return "refused: pre-gate"
    if row["not_found"]:
        return "refused: a name no passage holds"
    if row["unknown"]:
        return "refused: a word no note uses"
    return "refused: floor"


def run(homes: Path, sets: list[str]) -> list[dict]:
    import ragcli.pipeline.answer as A
    from ragcli.config import load_config
    from ragcli.retrieve import Searcher

    seen: dict = {}
    covers, select = A.covers, A.select_evidence

    def recording_covers(best, close, question, quotes, unknown):
        seen.update(best=round(best, 3), cosine=round(A._top_cosine(seen["hits"]), 3), close=close,
                    unknown=list(unknown))
        return covers(best, close, question, quotes, unknown)

    def recording_select(question, hits, *args, **kwargs):
        seen["hits"] = hits
        return select(question, hits, *args, **kwargs)

    A.covers, A.select_evidence = recording_covers, recording_select
    rows = []
    for corpus in ("obsidian-help", "examples"):
        os.environ["RAG_HOME"] = str(homes / "shared" / corpus)
        config = load_config({})
        searcher = Searcher(config)
        for name in sets:
            for line in (QUESTIONS / SETS[name]).read_text(encoding="utf-8").splitlines():
                q = json.loads(line)
                if q.get("corpus", "obsidian-help") != corpus:
                    continue
                seen.clear()
                result = A.answer(config, q["question"], generator=None, searcher=searcher, quotes_only=True)
                paths = [q["path"], *q.get("also", [])] if q.get("path") else []

                def of_note(path: str, paths=paths) -> bool:
                    return any(path.endswith("/" + p) for p in paths)

                rows.append({"id": q["id"], "set": name, "answerable": q.get("answerable", True),
                             "covered": result.covered, "tentative": bool(result.tentative),
                             "in_hits": any(of_note(h.chunk.path) for h in seen.get("hits", [])),
                             "shown": any(of_note(x.path) for x in result.quotes),
                             "not_found": list(result.not_found or []),
                             **{k: v for k, v in seen.items() if k != "hits"}})
        searcher.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--homes", type=Path, required=True)
    ap.add_argument("--set", action="append", choices=sorted(SETS), dest="sets")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    rows = run(args.homes, args.sets or list(SETS))
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for answerable in (True, False):
        group = [r for r in rows if r["answerable"] is answerable]
        counts = collections.Counter(cause(r) for r in group)
        print(f"{'answerable' if answerable else 'unanswerable'} ({len(group)}): "
              + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for name in dict.fromkeys(r["set"] for r in rows):
        group = [r for r in rows if r["set"] == name and r["answerable"]]
        refused = [r for r in group if not r["covered"]]
        if not group:
            continue
        print(f"{name}: note among the hits read {sum(r['in_hits'] for r in group)}/{len(group)}, shown "
              f"{sum(r['shown'] for r in group)}, refused {len(refused)} "
              f"({sum(r['in_hits'] for r in refused)} with the note among the hits)")


if __name__ == "__main__":
    main()
