"""Chat follow-ups: does the answer to "What ratio?" after "How many clicks for espresso?" quote
the note the conversation is about, and only it? For each pair of ``questions/followups.jsonl``
the first question is asked, the follow-up is made to stand alone as `rag chat` makes it
(``pipeline.chat.standalone``), and asked with the first as its context, quotes only.

    python bench/bench_answers2.py --quotes-only --set users    # once: builds the homes
    python bench/bench_followups.py                             # same --homes as bench_answers2

Prints, per pair, the standalone form and the notes quoted; then the share of pairs whose note
is quoted, the share of quotes from it, words read and refusals. Never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def run(homes: Path) -> dict[str, dict]:
    from ragcli import Notes
    from ragcli.pipeline.chat import Turn, standalone

    rows = [json.loads(line) for line in (ROOT / "bench" / "questions" / "followups.jsonl").open()]
    out: dict[str, dict] = {}
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        home = homes / "shared" / corpus
        if not (home / "index").is_dir():
            sys.exit(f"no index in {home}: run bench/bench_answers2.py with the same --homes first")
        os.environ["RAG_HOME"] = str(home)
        with Notes(watcher=False) as notes:
            for row in (r for r in rows if r["corpus"] == corpus):
                first = notes.ask(row["first"], quotes_only=True)
                alone = standalone(row["follow"], Turn(row["first"], row["first"], first))
                answer = notes.ask(row["follow"], quotes_only=True, retrieval_query=alone, context=row["first"])
                paths = [q.path for q in answer.quotes]
                good = [p for p in paths if any(p.endswith("/" + name) for name in row["paths"])]
                out[row["id"]] = {"standalone": alone, "covered": answer.covered, "quotes": len(paths),
                                  "of_the_note": len(good), "words": sum(len(q.text.split()) for q in answer.quotes)}
                print(f"{row['id']} {alone!r} covered={answer.covered} {len(good)}/{len(paths)} "
                      f"{[Path(p).name for p in paths]}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--homes", type=Path, default=Path(tempfile.gettempdir()) / "ragcli-bench-answers2",
                        help="the folder bench_answers2.py built its indexes in (HOMES/shared/<corpus>)")
    parser.add_argument("--json", type=Path, help="write the per-pair figures here")
    args = parser.parse_args()
    os.environ.setdefault("RAG_DAEMON", "off")
    out = run(args.homes)
    n = len(out)
    quotes = sum(v["quotes"] for v in out.values()) or 1
    print(f"pairs {n}: the note quoted {sum(1 for v in out.values() if v['of_the_note'])}/{n}, "
          f"quotes of the note {sum(v['of_the_note'] for v in out.values()) / quotes:.3f}, "
          f"words {sum(v['words'] for v in out.values()) / n:.1f}, "
          f"refused {sum(not v['covered'] for v in out.values())}/{n}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
