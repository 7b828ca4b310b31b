"""Where does the chunk that answers a how-to question stand? (issue 19, retrieval misses)

For each question of bench/questions/howto.jsonl (or --set multipart, whose parts carry a path
and lines too), the chunks holding the reference lines are looked up, and their rank printed in
the keyword list, the vector list and the fused list (all 50 candidates a side), with where they
stand against the top hit: the same note, the same section, and whether the question's words
meet the answer's heading. A question whose answering chunk is not among the hits `rag ask`
reads for evidence (top_k, then `with_sections` and `with_matching_sections`) is a retrieval miss.

    RAG_HOME=/tmp/rb6/shared/obsidian-help python bench/diagnose_howto.py [--split tune] [--all]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragcli.config import load_config  # noqa: E402
from ragcli.retrieve import Searcher  # noqa: E402
from ragcli.retrieve.sections import with_matching_sections, with_sections  # noqa: E402
from ragcli.retrieve.fusion import fts_query  # noqa: E402
from ragcli.words import query_terms  # noqa: E402

SETS = {"howto": "howto.jsonl", "multipart": "multipart.jsonl"}


def targets(row: dict) -> list[tuple[str, list[int]]]:
    if "parts" in row:
        return [(p["path"], p["lines"]) for p in row["parts"] if p.get("path")]
    return [(row["path"], row["lines"])]


def answering_chunks(index, path: str, lines: list[int]) -> list:
    rows = index._m.db.execute("SELECT id FROM chunks WHERE path LIKE ? AND line_start <= ? AND line_end >= ?",
                               (f"%/{path}", lines[1], lines[0])).fetchall()
    return list(index.chunks([r[0] for r in rows]).values())


def rank_in(ranked: list[tuple[str, float]], ids: set[str]) -> int | None:
    return next((i + 1 for i, (cid, _s) in enumerate(ranked) if cid in ids), None)


def lists(searcher: Searcher, query: str, n: int = 50):
    """(keyword, vector, fused) candidate rankings, as ``Searcher._hybrid`` builds them."""
    match = searcher._respelled(fts_query(query))
    qvec = searcher.embedder.embed_queries([query])[0]
    vec = searcher.index.vector_search(qvec, n, None)
    kw = searcher._ranker.start(match, n, None)() if match else []
    hits = searcher.search(query, n, "hybrid")
    fused = [(h.chunk.id, h.score) for h in hits]
    return kw, vec, fused, hits


def within_note(searcher: Searcher, question: str, answer) -> str:
    """The answer chunk's rank among its note's chunks: by the chunk's cosine, by its heading's."""
    qvec = searcher.embedder.embed_queries([question])[0]
    ids = [r[0] for r in searcher.index._m.db.execute("SELECT id FROM chunks WHERE path = ?", (answer.path,))]
    chunks = searcher.index.chunks(ids)
    cos = searcher.cosines(qvec, ids)
    by_cos = sorted(ids, key=lambda c: -cos.get(c, 0))
    heads = sorted({c.heading for c in chunks.values()})
    hv = searcher.embed_passages([f"{answer.title} > {h}" for h in heads])
    hcos = dict(zip(heads, (hv @ qvec).tolist()))
    by_head = sorted(heads, key=lambda h: -hcos[h])
    return (f"{len(ids)} chunks, {len(heads)} headings; by cosine #{by_cos.index(answer.id) + 1},"
            f" by heading #{by_head.index(answer.heading) + 1} (best {by_head[0]!r})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="howto", choices=sorted(SETS))
    ap.add_argument("--split", choices=["tune", "check"])
    ap.add_argument("--all", action="store_true", help="every question, not only the misses")
    ap.add_argument("--corpus", default="obsidian-help", help="the questions on this corpus (RAG_HOME's)")
    args = ap.parse_args()
    config = load_config()
    searcher = Searcher(config)
    rows = [json.loads(line) for line in (ROOT / "bench" / "questions" / SETS[args.set]).read_text().splitlines()
            if line.strip()]
    rows = [r for r in rows if (not args.split or r.get("split") == args.split)
            and r.get("corpus", "obsidian-help") == args.corpus]
    misses = 0
    for row in rows:
        kw, vec, fused, hits = lists(searcher, row["question"])
        top = hits[:config.top_k]
        index = searcher.index
        read = {h.chunk.id for h in with_matching_sections(
            row["question"], with_sections(top, index.section_chunks), index.note_headings, index.section_chunks,
            searcher.embed_passages)}
        for path, lines in targets(row):
            chunks = answering_chunks(searcher.index, path, lines)
            ids = {c.id for c in chunks}
            miss = not ids & read
            misses += miss
            if not (miss or args.all):
                continue
            top1 = top[0].chunk if top else None
            head = chunks[0].heading if chunks else ""
            words = query_terms(row["question"]) & query_terms(f"{chunks[0].title} {head}") if chunks else set()
            notes_top = [h.chunk.path.rsplit("/", 1)[-1] for h in top]
            print(f"{row['id']} [{row.get('split', '')}] {'MISS' if miss else 'ok  '} {row['question']}")
            print(f"   answer: {path} :{lines} heading={head!r} chunks={len(chunks)}")
            print(f"   rank kw={rank_in(kw, ids)} vec={rank_in(vec, ids)} fused={rank_in(fused, ids)}"
                  f"  same note as top1={bool(top1 and chunks and top1.path == chunks[0].path)}"
                  f" same section={bool(top1 and chunks and top1.path == chunks[0].path and top1.heading == head)}"
                  f"  note in top5 x{sum(h.chunk.path == chunks[0].path for h in top) if chunks else 0}"
                  f"  q&heading words={sorted(words)}")
            print(f"   top5: {notes_top}")
            if chunks:
                print(f"   within its note: {within_note(searcher, row['question'], chunks[0])}")
    print(f"{misses} answering chunks outside the evidence hits ({len(rows)} questions)")
    searcher.close()


if __name__ == "__main__":
    main()
