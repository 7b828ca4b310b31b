"""What the "not covered" gate sees, per question, for every bench set: dump it, then try rules.

For each question of answers / paraphrase / multipart / howto / unanswerable_users / users, the answer
flow runs up to the gate (`pipeline.answer.answer_from_hits` with quotes only) and this records
the gate's inputs and a few features it does not read yet: the hits' cosines (margin of the top
over the rest), whether the keyword and vector sides agree on the top note, how many notes the
top hits stand in, and for each content word of the question its nearest word in the quotes
(the embedding model's meaning of single words, as `relevance.said_otherwise` reads it).

    python bench/gate_features.py --homes /tmp/rb7-gateA/shared --out feats.json
    python bench/gate_features.py --load feats.json            # the figures again, no pipeline

Open indexes only (build them with bench_answers2.py first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

SETS = {"answers": "answers.jsonl", "paraphrase": "paraphrase.jsonl", "multipart": "multipart.jsonl",
        "howto": "howto.jsonl", "unanswerable": "unanswerable_users.jsonl", "users": "users.jsonl"}


def load_rows(sets, limit: int | None) -> list[dict]:
    rows = []
    for name in sets:
        lines = (ROOT / "bench" / "questions" / SETS[name]).read_text().splitlines()
        picked = [json.loads(x) for x in lines if x.strip()][:limit]
        for row in picked:
            row.setdefault("corpus", "obsidian-help")
            row.setdefault("answerable", True)
            row["set"] = name
            if "split" not in row:  # the older sets: odd ids tune, even ids check (bench_answers2)
                row["split"] = "tune" if int(row["id"].split("-")[-1]) % 2 else "check"
            rows.append(row)
    return rows


def word_neighbours(words: list[str], texts: list[str], embed) -> dict[str, float]:
    """Each word's nearest cosine among the content words of the texts (1.0 when used as is)."""
    from ragcli.retrieve.relevance import _QUOTE_WORDS, _TEXT_WORDS
    from ragcli.words import query_terms

    said = list(dict.fromkeys(w for t in texts for w in _TEXT_WORDS.findall(t.lower()) if query_terms(w)))
    stems = set().union(*(query_terms(t) for t in texts)) if texts else set()
    out = {w: 1.0 for w in words if query_terms(w) <= stems}
    rest = [w for w in words if w not in out]
    candidates = [w for w in said if w not in rest][:_QUOTE_WORDS]
    if rest and candidates:
        vectors = embed(rest + candidates)
        nearest = (vectors[:len(rest)] @ vectors[len(rest):].T).max(axis=1)
        out.update({w: float(s) for w, s in zip(rest, nearest)})
    return {w: out.get(w, 0.0) for w in words}


def features_of(row: dict, searcher, config) -> dict:
    import re

    from ragcli.pipeline import answer as ans
    from ragcli.retrieve.relevance import names_in, relevant, unheard_words, unknown_names
    from ragcli.words import asks_figure, holds_figure, query_terms

    q = row["question"]
    hits = ans._search_parts(searcher, q, config)
    result = ans.answer_from_hits(config, q, hits, None, searcher, quotes_only=True)
    f = {k: row.get(k) for k in ("id", "set", "split", "answerable", "corpus", "question", "path")}
    f["also"] = row.get("also", [])
    f["covered"] = result.covered
    f["tentative"] = bool(result.tentative) if result.covered else None
    f["relevant"] = relevant(q, hits, config.min_score)
    ranked = sorted(hits, key=lambda h: h.rank)
    cos = sorted((h.vector_score for h in hits if h.vector_score is not None), reverse=True)
    f["cos"] = cos[:10]
    f["top_notes"] = [h.chunk.path for h in ranked[:5]]
    by_vec = max(hits, key=lambda h: h.vector_score or -1) if hits else None
    by_kw = max(hits, key=lambda h: h.keyword_score or -1) if hits else None
    f["vec_note"] = by_vec.chunk.path if by_vec else ""
    f["kw_note"] = by_kw.chunk.path if by_kw and (by_kw.keyword_score or 0) > 0 else ""
    f["kw_top"] = max((h.keyword_score or 0.0 for h in hits), default=0.0)
    # what the gate reads (recomputed: answer_from_hits does not return it when it refuses)
    quotes = _gate_quotes(q, hits, searcher)  # also when the relevance gate refuses: what it would show
    f["quote_scores"] = [x.score for x in quotes]
    f["quote_notes"] = [x.path for x in quotes]
    f["best"] = max(f["quote_scores"], default=0.0)
    f["unknown"] = unknown_names(q, searcher.index.keyword_df)
    f["unheard"] = unheard_words(q, searcher.index.keyword_df)
    f["figure_missing"] = asks_figure(q) and not any(holds_figure(x.text, q) for x in quotes)
    words = list(dict.fromkeys(w for w in re.findall(r"[a-z][a-z-]{2,}", q.lower()) if query_terms(w)
                               and query_terms(w) <= query_terms(q)))
    texts = [ans.evidence_text(x) for x in quotes]
    f["words"] = word_neighbours(words, texts, searcher.embed_passages) if quotes else {w: 0.0 for w in words}
    f["words_top"] = word_neighbours(words, texts[:1], searcher.embed_passages) if quotes else {}
    f["idf"] = dict(zip(words, searcher.index.keyword_idf([f'"{w}"' for w in words]))) if words else {}
    f["df"] = dict(zip(words, searcher.index.keyword_df([f'"{w}"' for w in words]))) if words else {}
    f["shown"] = [x.text[:160] for x in (result.quotes or [])][:3]
    f["quote_texts"] = texts
    f["quote_plain"] = [x.text for x in quotes]
    f["hit_texts"] = [f"{h.chunk.title}\n{h.chunk.heading}\n{h.chunk.text}" for h in ranked[:5]]
    f["centroid_top"], f["centroid_margin"] = _nearest_note(q, searcher)
    f["names"] = names_in(q)
    f["asks_figure"] = asks_figure(q)
    return f


def _nearest_note(q: str, searcher) -> tuple[float, float]:
    """The question's cosine with the nearest note's centroid, and its margin over the second's:
    how much one note as a whole is about the question (session 17)."""
    import sqlite3

    import numpy as np

    db = sqlite3.connect(searcher.config.index_dir / "manifest.sqlite")
    try:
        rows = [np.frombuffer(blob, dtype=np.float32) for (blob,) in db.execute("SELECT centroid FROM notes")]
    finally:
        db.close()
    if not rows:
        return 0.0, 0.0
    cosines = np.sort(np.stack(rows) @ searcher.embedder.embed_queries([q])[0])[::-1]
    return float(cosines[0]), float(cosines[0] - cosines[1]) if len(cosines) > 1 else 0.0


def _gate_quotes(q: str, hits, searcher):
    """The quotes answer_from_hits reads its gate on (the same calls, in its order)."""
    from ragcli.pipeline import answer as ans
    from ragcli.retrieve.evidence import select_evidence
    from ragcli.retrieve.figures import quote_the_row
    from ragcli.retrieve.parts import question_parts
    from ragcli.retrieve.sections import with_matching_sections, with_sections
    from ragcli.retrieve.pages import with_following, with_page_rows
    from ragcli.retrieve.rule_before import complete_lead_ins
    from ragcli.words import asks_reason

    index = searcher.index
    idf = ans._idf(searcher)
    read = with_matching_sections(q, with_sections(hits, index.section_chunks), index.note_headings,
                                  index.section_chunks, searcher.embed_passages)
    rows = with_page_rows(read, index.page_chunks)
    if asks_reason(q):
        rows = with_following(rows, index.page_chunks)
    ev = select_evidence(q, rows, embed=searcher.embed_passages, idf=idf, parts=question_parts(q),
                         part_floor=ans.PART_FLOOR)
    return complete_lead_ins(quote_the_row(q, ev.quotes, rows, idf), index.section_chunks)


def collect(rows: list[dict], homes: Path) -> list[dict]:
    from ragcli.config import load_config
    from ragcli.retrieve import Searcher

    feats = []
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        os.environ["RAG_HOME"] = str(homes / corpus)
        config = load_config()
        searcher = Searcher(config)
        for row in (r for r in rows if r["corpus"] == corpus):
            feats.append(features_of(row, searcher, config))
            print(f"{row['id']:8s} covered={feats[-1]['covered']} best={feats[-1]['best']:.3f}", file=sys.stderr)
        searcher.close()
    return feats


def summary(feats: list[dict]) -> None:
    for split in ("tune", "check"):
        for name in SETS:
            group = [f for f in feats if f["set"] == name and f["split"] == split]
            pos = [f for f in group if f["answerable"]]
            neg = [f for f in group if not f["answerable"]]
            print(f"{split:5s} {name:12s} answerable refused {sum(not f['covered'] for f in pos)}/{len(pos)}"
                  f"  tentative {sum(bool(f['covered'] and f['tentative']) for f in pos)}"
                  f"  unanswerable refused {sum(not f['covered'] for f in neg)}/{len(neg)}")


def band(feats: list[dict], low: float = 0.33, high: float = 0.60) -> None:
    """Where answerable and unanswerable questions fall, on each feature the gate could read, among
    those whose best quote scores in [low, high): a feature that tells them apart there would let the
    gate refuse the one and show the other."""
    group = [f for f in feats if low <= f["best"] < high]
    for name, get in (("best", lambda f: f["best"]), ("top cosine", lambda f: (f["cos"] or [0.0])[0]),
                      ("centroid", lambda f: f.get("centroid_top", 0.0)),
                      ("centroid margin", lambda f: f.get("centroid_margin", 0.0))):
        for label, rows in (("answerable", [f for f in group if f["answerable"]]),
                            ("unanswerable", [f for f in group if not f["answerable"]])):
            values = sorted(get(f) for f in rows)
            if values:
                print(f"band {low}-{high} {name:16s} {label:12s} n={len(values):3d} min {values[0]:.3f} "
                      f"median {values[len(values) // 2]:.3f} max {values[-1]:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--homes", type=Path, default=Path("/tmp/rb7-gateA/shared"))
    ap.add_argument("--set", action="append", choices=list(SETS))
    ap.add_argument("--limit", type=int)
    ap.add_argument("--id", action="append", help="only these questions")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--load", type=Path)
    args = ap.parse_args()
    if args.load:
        feats = json.loads(args.load.read_text())
    else:
        rows = load_rows(args.set or list(SETS), args.limit)
        feats = collect([r for r in rows if not args.id or r["id"] in args.id], args.homes)
        if args.out:
            args.out.write_text(json.dumps(feats, indent=1))
    summary(feats)
    band(feats)


if __name__ == "__main__":
    main()
