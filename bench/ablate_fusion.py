"""Issue 13's ablation, offline: every idea tried for paraphrased questions, on the vault and
on SciFact, dev and test columns, in a minute from indexes already built.

    python bench/ablate_fusion.py vault --home DIR     # a vault index built by `rag index`
    python bench/ablate_fusion.py scifact              # the cached `rag eval` index of SciFact
    python bench/ablate_fusion.py scifact --about      # + the about-vector idea (embeds 5k texts)
    python bench/ablate_fusion.py vault --terms        # + keyword weight by idf share of terms (slow)

The live searcher (bench_paraphrase.py, bench_eval.py) measures what ships; this script
re-implements the ranking in numpy over *every* chunk (exact cosines, bm25 from FTS5) so
ideas that were rejected and never shipped can still be measured: note-level aggregation
(max + gamma * the next two chunks), an embedded about-text per note (title + first 60
words), dense pseudo-relevance feedback, bigram phrases in the keyword query, field weights,
gating bm25 by the cosine, the vector side's own min-max. It reads the index's SQLite file
read-only, which product code never does outside ragcli/store (an analysis tool may).
Splits: vault paraphrase odd ids = dev, even = test (plus the answers.jsonl questions worded
like the notes, "matched"); SciFact first 100 judged queries = dev, last 200 = test.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "corpora"
VAULT = SHARED / "obsidian-help" / "en"
QUESTIONS = ROOT / "bench" / "questions"

from ragcli.config import load_config  # noqa: E402
from ragcli.retrieve.fusion import STOPWORDS, _WORD, fts_query  # noqa: E402


class Corpus:
    """Every chunk of an index: its note, its cached vector; bm25 of any FTS5 query."""

    def __init__(self, index_dir: Path):
        self.db = sqlite3.connect(f"file:{index_dir}/manifest.sqlite?mode=ro", uri=True)
        rows = self.db.execute("SELECT rowid, path, vec_key, title, text, ordinal FROM chunks"
                               " ORDER BY rowid").fetchall()
        self.row_of = {r[0]: i for i, r in enumerate(rows)}
        vecs = {k: np.frombuffer(b, np.float32) for k, b in self.db.execute("SELECT key, vec FROM vectors")}
        self.M = np.stack([vecs[r[2]] for r in rows])
        self.paths = sorted({r[1] for r in rows})
        pid = {p: i for i, p in enumerate(self.paths)}
        self.note = np.array([pid[r[1]] for r in rows])
        first: dict[int, tuple[int, str, str]] = {}
        for r in rows:
            p = pid[r[1]]
            if p not in first or r[5] < first[p][0]:
                first[p] = (r[5], r[3], r[4])
        self.about_texts = [f"{first[p][1]}\n{' '.join(first[p][2].split(chr(10) * 2)[0].split()[:60])}"
                            for p in range(len(self.paths))]
        centroid = np.zeros((len(self.paths), self.M.shape[1]), np.float32)
        np.add.at(centroid, self.note, self.M)
        self.centroid = centroid / np.linalg.norm(centroid, axis=1, keepdims=True)
        self.n_chunks = len(rows)
        # each chunk's neighbours in its note (by ordinal): itself where it has none
        order = sorted(range(len(rows)), key=lambda i: (rows[i][1], rows[i][5]))
        self.prev = np.arange(len(rows))
        self.next = np.arange(len(rows))
        for a, b in zip(order, order[1:]):
            if rows[a][1] == rows[b][1]:
                self.next[a], self.prev[b] = b, a

    def bm25(self, match: str, weights=(3.0, 2.0, 1.0)) -> np.ndarray:
        out = np.zeros(self.n_chunks, np.float32)
        if match:
            for rowid, s in self.db.execute("SELECT rowid, bm25(chunks_fts, ?, ?, ?) FROM chunks_fts"
                                            " WHERE chunks_fts MATCH ?", (*weights, match)):
                out[self.row_of[rowid]] = -s
        return out

    def idf_sum(self, match: str) -> float:
        total = 0.0
        for term in match.split(" OR ") if match else []:
            n = self.db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (term,)).fetchone()[0]
            total += max(math.log((self.n_chunks - n + 0.5) / (n + 0.5)), 1e-6)
        return total


def questions(name: str) -> list[dict]:
    if name == "scifact":
        from ragcli.maintenance.eval import load_beir

        data = load_beir(SHARED / "scifact")
        return [{"text": data.queries[q], "split": "dev" if i < 100 else "test", "rel": data.qrels[q]}
                for i, q in enumerate(data.queries)]
    out = []
    for line in (QUESTIONS / "paraphrase.jsonl").read_text().splitlines():
        q = json.loads(line)
        out.append({"text": q["question"], "split": "dev" if int(q["id"].split("-")[1]) % 2 else "test",
                    "rel": {str(VAULT / p): 1 for p in [q["path"], *q["also"]]}})
    for line in (QUESTIONS / "answers.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q.get("corpus") == "obsidian-help" and q.get("answerable"):
            out.append({"text": q["question"], "split": "matched", "rel": {str(VAULT / q["path"]): 1}})
    return out


def _phrases(text: str) -> str:
    words = [w for w in _WORD.findall(text.lower()) if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS]
    pairs = dict.fromkeys(f'"{a} {b}"' for a, b in zip(words, words[1:]))
    return " OR ".join([fts_query(text), *pairs]) if words else fts_query(text)


# Words that say how a question is asked, not what it is about (tried for issue 13: removed
# from the keyword query before FTS5 sees it).
FILLER = frozenset("""
way ways want wants wanted need needs needed possible able something anything someone anyone
somebody anybody thing things somehow somewhere anywhere just really please also like get gets
got make makes lot lots kind sort else instead rather whether could should might may must
shall let tell know
""".split())


def _filler_free(text: str) -> str:
    words = [w for w in _WORD.findall(text.lower()) if (len(w) > 1 or w.isdigit()) and w not in STOPWORDS]
    kept = [w for w in words if w not in FILLER]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(kept or words)) if words else fts_query(text)


def _prefixed(text: str) -> str:
    match = fts_query(text)
    return " OR ".join(f"{t}*" for t in match.split(" OR ")) if match else match  # "term"*


def rank(c: Corpus, q: dict, *, mode="hybrid", n=50, alpha=0.5, note=0.0, about=0.0, cover=0.0, own=False,
         gamma=0.0, gate=0.0, rrf=False, cos=None, bm=None, nb=0.0, terms=False, agree=0.0) -> list[str]:
    """Notes in rank order, the way Searcher ranks chunks (each note at its best chunk).
    ``nb``: that times the better cosine of the chunk's two neighbours is added to its own;
    ``terms``: the keyword weight follows the share of the query's idf that the best chunk
    holds (distinct terms), not its normalised bm25; ``agree``: the keyword weight also
    shrinks when the keyword side's best chunk is far from the query by cosine (its
    normalised cosine below ``agree``)."""
    cos = q["cos"] if cos is None else cos
    bm = q["bm"] if bm is None else bm
    ev = cos + note * (c.centroid @ q["qvec"])[c.note] + (about * q["about"][c.note] if about else 0.0)
    if nb:
        ev = ev + nb * np.maximum(cos[c.prev], cos[c.next])
    vt = np.argpartition(-cos, n)[:n]
    nz = np.nonzero(bm)[0]
    kt = nz[np.argsort(-bm[nz])][:n]
    if mode == "vector":
        pool, s = vt, ev[vt]
    elif mode == "keyword":
        pool, s = kt, bm[kt]
    else:
        pool = np.union1d(vt, kt)
        if rrf:
            rv = {i: r for r, i in enumerate(vt[np.argsort(-cos[vt])], 1)}
            rk = {i: r for r, i in enumerate(kt, 1)}
            s = np.array([1 / (60 + rv[i]) if i in rv else 0 for i in pool]) + \
                np.array([1 / (60 + rk[i]) if i in rk else 0 for i in pool])
        else:
            lo, hi = (ev[vt].min(), ev[vt].max()) if own else (ev[pool].min(), ev[pool].max())
            v = np.clip((ev[pool] - lo) / max(hi - lo, 1e-9), 0, 1)
            b = np.minimum(np.maximum(bm[pool], 0) / q["idf"], 1.0) if q["idf"] else np.zeros(len(pool))
            beta = 1 - alpha
            if cover and terms:
                share = q["share"][pool].max() if len(pool) else 0.0
                beta *= min(share / cover, 1.0)
            elif cover:
                beta *= min(b.max() / cover, 1.0) if len(b) else 0.0
            if agree and len(b):
                beta *= min(v[int(np.argmax(b))] / agree, 1.0)
            if gate:
                b = b * v ** gate
            s = (1 - beta) * v + beta * b
    best: dict[int, list[float]] = {}
    for i in np.argsort(-s, kind="stable"):
        best.setdefault(c.note[pool[i]], []).append(float(s[i]))
    score = {p: v[0] + gamma * sum(v[1:3]) for p, v in best.items()}
    return [c.paths[p] for p in sorted(score, key=lambda p: -score[p])]


def metrics(ranked: list[str], rel: dict[str, int]) -> tuple[float, float, float, float]:
    """(nDCG@10, hit@1, hit@5, MRR@10), trec_eval's nDCG (gains from the qrels)."""
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted((g for g in rel.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    first = next((i for i, d in enumerate(ranked[:10]) if d in rel), None)
    if first is None:
        return dcg / idcg, 0.0, 0.0, 0.0
    return dcg / idcg, float(first == 0), float(first < 5), 1 / (first + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", choices=["vault", "scifact"])
    parser.add_argument("--home", type=Path, help="data dir of the vault index (vault)")
    parser.add_argument("--about", action="store_true", help="also embed an about-text per note and try it")
    parser.add_argument("--terms", action="store_true",
                        help="also the keyword weight by the idf share of distinct terms (one FTS5 query per term)")
    args = parser.parse_args()
    from ragcli.embed import make_embedder

    if args.corpus == "vault":
        config = load_config({"data_dir": str(args.home)}) if args.home else load_config()
        index_dir, n = config.index_dir, 50
    else:
        from ragcli.maintenance.eval import eval_config, load_beir

        config = load_config()
        index_dir, n = eval_config(config, load_beir(SHARED / "scifact"), SHARED / "scifact").index_dir, 300
    c = Corpus(index_dir)
    qs = questions(args.corpus)
    embedder = make_embedder(config)
    about = embedder.embed_documents(c.about_texts) if args.about else None
    for q, vec in zip(qs, embedder.embed_queries([q["text"] for q in qs])):
        q["qvec"], q["cos"] = vec, c.M @ vec
        q["match"] = fts_query(q["text"])
        q["bm"], q["idf"] = c.bm25(q["match"]), c.idf_sum(q["match"])
        if about is not None:
            q["about"] = about @ vec
        if args.terms:
            held = np.zeros(c.n_chunks, np.float32)  # idf of the distinct query terms each chunk holds
            for term in q["match"].split(" OR ") if q["match"] else []:
                held += (c.bm25(term) > 0) * c.idf_sum(term)
            q["share"] = held / q["idf"] if q["idf"] else held
    embedder.close()

    def prf(q, beta=0.3, k=3):
        top = np.argsort(-q["cos"])[:k]
        q2 = q["qvec"] + beta * c.M[top].mean(axis=0)
        return c.M @ (q2 / np.linalg.norm(q2))

    ideas = [
        ("keyword", dict(mode="keyword")),
        ("vector", dict(mode="vector")),
        ("hybrid (before)", {}),
        ("hybrid RRF k=60", dict(rrf=True)),
        ("hybrid alpha 0.6", dict(alpha=0.6)),
        ("hybrid cosines min-max on own top n", dict(own=True)),
        ("hybrid keyword weight by cover 0.5", dict(cover=0.5)),
        ("hybrid keyword weight by cover 1.0", dict(cover=1.0)),
        ("hybrid bm25 gated by cosine", dict(gate=1.0)),
        ("hybrid note aggregation gamma 0.1", dict(gamma=0.1)),
        ("hybrid note aggregation gamma 0.3", dict(gamma=0.3)),
        ("hybrid dense PRF (Rocchio 0.3, top 3)", dict(cos="prf")),
        ("hybrid + bigram phrases in the keyword query", dict(bm="phrases")),
        ("hybrid field weights 1,1,1", dict(bm="flat")),
        ("hybrid note centroid 0.5", dict(note=0.5)),
        *([("hybrid about-vector 0.3", dict(about=0.3)),
           ("hybrid about 0.3 + centroid 0.3 + cover 0.5", dict(about=0.3, note=0.3, cover=0.5))]
          if about is not None else []),
        ("vector note centroid 0.5", dict(mode="vector", note=0.5)),
        ("hybrid cover 0.5 + centroid 0.5 (shipped)", dict(cover=0.5, note=0.5)),
        # issue 13, second round: each against the shipped row above
        ("shipped + filler words out of the keyword query", dict(cover=0.5, note=0.5, bm="filler")),
        ("shipped + prefix match (term*) for every term", dict(cover=0.5, note=0.5, bm="prefix")),
        ("shipped, RRF k=60 instead of convex", dict(note=0.5, rrf=True)),
        ("shipped, alpha 0.4", dict(cover=0.5, note=0.5, alpha=0.4)),
        ("shipped, alpha 0.6", dict(cover=0.5, note=0.5, alpha=0.6)),
        ("shipped, cover 0.7", dict(cover=0.7, note=0.5)),
        ("shipped, cover 1.0", dict(cover=1.0, note=0.5)),
        ("shipped, centroid 0.7", dict(cover=0.5, note=0.7)),
        ("shipped, centroid 1.0", dict(cover=0.5, note=1.0)),
        ("shipped, candidates n/2", dict(cover=0.5, note=0.5, n=n // 2)),
        ("shipped, candidates 2n", dict(cover=0.5, note=0.5, n=n * 2)),
        ("shipped + neighbour chunks 0.25", dict(cover=0.5, note=0.5, nb=0.25)),
        ("shipped + neighbour chunks 0.5", dict(cover=0.5, note=0.5, nb=0.5)),
        ("shipped + keyword weight by cosine agreement 0.5", dict(cover=0.5, note=0.5, agree=0.5)),
        ("shipped + keyword weight by cosine agreement 0.7", dict(cover=0.5, note=0.5, agree=0.7)),
        ("shipped + keyword weight by cosine agreement 0.65", dict(cover=0.5, note=0.5, agree=0.65)),
        ("shipped + keyword weight by cosine agreement 0.8", dict(cover=0.5, note=0.5, agree=0.8)),
        ("shipped + cover 0.7 + agreement 0.5", dict(cover=0.7, note=0.5, agree=0.5)),
        *([("shipped, cover by idf share of terms 0.5", dict(cover=0.5, note=0.5, terms=True)),
           ("shipped, cover by idf share of terms 0.7", dict(cover=0.7, note=0.5, terms=True)),
           ("shipped, cover by idf share of terms 1.0", dict(cover=1.0, note=0.5, terms=True))]
          if args.terms else []),
    ]
    extra = {"phrases": {i: c.bm25(_phrases(q["text"])) for i, q in enumerate(qs)},
             "flat": {i: c.bm25(q["match"], (1.0, 1.0, 1.0)) for i, q in enumerate(qs)},
             "filler": {i: c.bm25(_filler_free(q["text"])) for i, q in enumerate(qs)},
             "prefix": {i: c.bm25(_prefixed(q["text"])) for i, q in enumerate(qs)}}
    idf_of = {"filler": {i: c.idf_sum(_filler_free(q["text"])) for i, q in enumerate(qs)},
              "prefix": {i: c.idf_sum(_prefixed(q["text"])) for i, q in enumerate(qs)}}
    splits = ["dev", "test", "matched"] if args.corpus == "vault" else ["dev", "test"]
    cols = "h@1 h@5 MRR" if args.corpus == "vault" else "nDCG@10 MRR"
    print(f"{args.corpus}: {c.n_chunks} chunks, {len(c.paths)} notes; columns per split: {cols}")
    for label, kw in ideas:
        figures: dict[str, list] = {s: [] for s in splits}
        for i, q in enumerate(qs):
            opts = dict(kw)
            if opts.get("cos") == "prf":
                opts["cos"] = prf(q)
            query = q
            if opts.get("bm") in idf_of:  # the keyword scale follows the terms searched
                query = {**q, "idf": idf_of[opts["bm"]][i]}
            if opts.get("bm") in extra:
                opts["bm"] = extra[opts["bm"]][i]
            opts.setdefault("n", n)
            figures[q["split"]].append(metrics(rank(c, query, **opts), q["rel"]))
        means = {s: np.mean(v, axis=0) for s, v in figures.items()}
        if args.corpus == "vault":
            row = " | ".join(f"{s} {m[1]:.3f} {m[2]:.3f} {m[3]:.3f}" for s, m in means.items())
        else:
            row = " | ".join(f"{s} {m[0]:.4f} {m[3]:.3f}" for s, m in means.items())
        print(f"{label:46s} {row}", flush=True)


if __name__ == "__main__":
    main()
