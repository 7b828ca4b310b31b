"""``rag eval``: retrieval quality on a BEIR folder, measured the way papers report it.

A BEIR folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/test.tsv`` (``query-id corpus-id score``). The corpus is
indexed into a throwaway index of its own, under a cache folder keyed by the corpus bytes
and the chunking/embedding settings, never the user's index. Each document becomes one
"file" whose path is its ``_id``, cut by the same chunker and embedded by the same embedder
as notes are; a document split into several chunks ranks by its best chunk. A second run
over the same corpus and settings finds every vector in the manifest's cache and embeds
nothing.

Metrics follow trec_eval: nDCG@10 with gains from the qrels and the ideal DCG from the
qrels (not from the run), recall@k over the relevant documents, MRR@10 (reciprocal rank of
the first relevant document in the top 10, else 0). ``bench/score_run.py`` rescores the
TREC run file with a separate implementation.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..errors import UsageError
from ..progress import ProgressFn, report

EVAL_VERSION = 1  # bump when the way documents become chunks changes
RUN_DEPTH = 100  # documents per query in the run file and for recall@100


@dataclass
class BeirData:
    corpus: dict[str, tuple[str, str]]  # doc id -> (title, text), in file order
    queries: dict[str, str]  # query id -> text, only those with judgements
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> relevance
    corpus_hash: str


@dataclass
class EvalReport:
    dataset: str
    mode: str
    queries: int
    ndcg_10: float
    recall_10: float
    recall_100: float
    mrr_10: float
    docs: int
    chunks: int
    embedded: int  # chunks embedded by this run (0 when the cache had them all)
    index_seconds: float
    query_ms_p50: float
    query_ms_p95: float
    index_dir: str
    per_query: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict:
        return {"dataset": self.dataset, "mode": self.mode, "queries": self.queries,
                "ndcg@10": round(self.ndcg_10, 4), "recall@10": round(self.recall_10, 4),
                "recall@100": round(self.recall_100, 4), "mrr@10": round(self.mrr_10, 4),
                "docs": self.docs, "chunks": self.chunks, "embedded": self.embedded,
                "index_seconds": round(self.index_seconds, 2),
                "chunks_per_second": (round(self.embedded / self.index_seconds, 2)
                                      if self.embedded and self.index_seconds else None),
                "query_ms_p50": round(self.query_ms_p50, 2), "query_ms_p95": round(self.query_ms_p95, 2),
                "index_dir": self.index_dir}


# --------------------------------------------------------------------------- reading


def _jsonl(path: Path) -> Iterable[dict]:
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UsageError(f"{path}:{number}: not JSON: {exc.msg}") from None


def load_beir(folder: Path, split: str = "test") -> BeirData:
    """Read a BEIR folder; only queries that have judgements in ``qrels/<split>.tsv`` count."""
    folder = Path(folder)
    corpus_path, queries_path = folder / "corpus.jsonl", folder / "queries.jsonl"
    qrels_path = folder / "qrels" / f"{split}.tsv"
    for need in (corpus_path, queries_path, qrels_path):
        if not need.is_file():
            raise UsageError(f"{need}: missing", hint="A BEIR folder has corpus.jsonl, queries.jsonl "
                                                      f"and qrels/{split}.tsv.")
    with corpus_path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256")
    corpus: dict[str, tuple[str, str]] = {}
    for row in _jsonl(corpus_path):
        corpus[str(row["_id"])] = (str(row.get("title") or ""), str(row.get("text") or ""))
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            parts = line.strip().split("\t") if "\t" in line else line.split()
            if len(parts) < 3 or (number == 1 and not parts[-1].lstrip("-").isdigit()):
                continue  # header or blank
            qid, did, score = parts[0], parts[-2], int(parts[-1])
            qrels.setdefault(qid, {})[did] = score
    all_queries = {str(row["_id"]): str(row.get("text") or "") for row in _jsonl(queries_path)}
    missing = sorted(set(qrels) - set(all_queries))
    if missing:
        raise UsageError(f"{qrels_path}: {len(missing)} query id(s) not in queries.jsonl, e.g. {missing[0]}")
    queries = {qid: all_queries[qid] for qid in qrels}
    return BeirData(corpus, queries, qrels, digest.hexdigest())


# --------------------------------------------------------------------------- metrics


def ndcg(ranked: Sequence[str], judged: dict[str, int], k: int = 10) -> float:
    """trec_eval's ndcg_cut: gain = relevance, discount log2(rank + 1), ideal from the qrels."""
    dcg = sum(judged.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]) if judged.get(doc, 0) > 0)
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall(ranked: Sequence[str], judged: dict[str, int], k: int) -> float:
    relevant = {d for d, g in judged.items() if g > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr(ranked: Sequence[str], judged: dict[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k]):
        if judged.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def score_query(ranked: Sequence[str], judged: dict[str, int]) -> dict[str, float]:
    return {"ndcg@10": ndcg(ranked, judged, 10), "recall@10": recall(ranked, judged, 10),
            "recall@100": recall(ranked, judged, 100), "mrr@10": mrr(ranked, judged, 10)}


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default) without numpy."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(pos), math.ceil(pos)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


# --------------------------------------------------------------------------- the eval index


def eval_cache_root(env: dict[str, str] | None = None) -> Path:
    """Where throwaway eval indexes live: $RAG_HOME/cache/eval, else $XDG_CACHE_HOME/ragcli/eval."""
    env = dict(os.environ if env is None else env)
    if env.get("RAG_HOME"):
        return Path(env["RAG_HOME"]).expanduser() / "cache" / "eval"
    cache = Path(env.get("XDG_CACHE_HOME") or Path(env.get("HOME") or Path.home()) / ".cache")
    return cache / "ragcli" / "eval"


def eval_config(config: Config, data: BeirData, folder: Path, cache_root: Path | None = None) -> Config:
    """A Config whose index lives in the eval cache, keyed by corpus + embedding + chunking."""
    from ..ingest.chunk import CHUNKER_VERSION

    settings = {"corpus": data.corpus_hash, "embed_model": config.embed_model, "tokens": config.chunk_tokens,
                "overlap": config.chunk_overlap, "chunker": CHUNKER_VERSION, "eval": EVAL_VERSION}
    # pooling and prefixes only when set (even to ""), so the keys of indexes cached before
    # them still hold; a catalogue model's own follow from embed_model, already in the key
    settings.update({k: v for k in ("embed_pooling", "embed_query_prefix", "embed_document_prefix")
                     if (v := getattr(config, k)) is not None})
    key = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(folder).resolve().name)[:40]
    root = cache_root or eval_cache_root()
    # chroma_url is cleared: an eval never writes into a shared Chroma server.
    return dataclasses.replace(config, data_dir=root / f"{name}-{key}", chroma_url="")


def build_eval_index(config: Config, data: BeirData, embedder,
                     progress: ProgressFn | None = None) -> tuple[int, int, int]:
    """Index every document (skipping those already there) through the same path as notes
    (``Indexer.add_documents``): each BEIR document is a "file" whose path is its ``_id``.
    Returns (docs, chunks, embedded)."""
    from ..pipeline.indexing import Indexer, IndexReport
    from ..store import FileRecord
    from ..types import Document, Section

    with Indexer(config, role="eval", progress=progress) as indexer:
        indexer.session.use_embedder(embedder)
        # An index built with other settings (another conversion of the model, an older
        # version of what the index holds) starts over; the vector cache survives that.
        indexer.embedder(start_over_on_mismatch=True)
        known = {path: rec.hash for path, rec in indexer.idx.files().items()}
        report = IndexReport(roots=[str(data.corpus_hash[:16])])
        stale = [p for p in known if p not in data.corpus]
        if stale:
            indexer.remove(stale, report)
        todo = []
        for doc_id, (title, text) in data.corpus.items():
            digest = hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()
            if known.get(doc_id) != digest:
                todo.append((doc_id, title, text, digest))
        now = time.time()
        docs = ((FileRecord(path=doc_id, root=report.roots[0], size=len(text), mtime_ns=0, hash=digest,
                            title=title, indexed_at=now),
                 Document(path=doc_id, title=title, sections=[Section((), text, 1, 1)]))
                for doc_id, title, text, digest in todo)
        indexer.add_documents(docs, report, total=len(todo))
        indexer.embed_pending(report)
        indexer.idx.prune()
        files, chunks = indexer.idx.counts()
    return files, chunks, report.embedded


# --------------------------------------------------------------------------- running


def rank_documents(searcher, query: str, mode: str, depth: int = RUN_DEPTH) -> list[tuple[str, float]]:
    """The top ``depth`` documents for a query: each document ranks by its best chunk."""
    hits = searcher.search(query, k=depth * 3, mode=mode, candidates=depth * 3)
    ranked: dict[str, float] = {}
    for hit in hits:
        if hit.chunk.path not in ranked:
            ranked[hit.chunk.path] = hit.score
        if len(ranked) >= depth:
            break
    return list(ranked.items())


def write_run(path: Path, runs: dict[str, list[tuple[str, float]]], tag: str) -> None:
    """TREC run lines ``qid Q0 docid rank score tag``; scores strictly fall with rank so any
    scorer that sorts by score (as trec_eval does) sees the same order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for qid, ranked in runs.items():
            previous = math.inf
            for rank, (doc, score) in enumerate(ranked, 1):
                score = round(float(score), 6)
                if score >= previous:
                    score = previous - 1e-6
                previous = score
                fh.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")


def evaluate(config: Config, folder: Path, mode: str | None = None, run_file: Path | None = None,
             progress: ProgressFn | None = None, cache_root: Path | None = None, embedder=None,
             fusion=None) -> EvalReport:
    """Index a BEIR folder into its own cached index, run its judged queries, score them."""
    from ..retrieve import MODES, Searcher
    from ..store import Index

    mode = mode or "hybrid"
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}", hint=f"Use one of: {', '.join(MODES)}")
    folder = Path(folder)
    data = load_beir(folder)
    econfig = eval_config(config, data, folder, cache_root)
    if embedder is None:
        from ..embed import make_embedder

        embedder = make_embedder(econfig, progress=progress)
    started = time.monotonic()
    docs, chunks, embedded = build_eval_index(econfig, data, embedder, progress)
    index_seconds = time.monotonic() - started
    qids = list(data.queries)
    runs: dict[str, list[tuple[str, float]]] = {}
    times: list[float] = []
    with contextlib.closing(Searcher(econfig, Index.open_reader(econfig), embedder=embedder,
                                     fusion=fusion)) as searcher:
        if qids:  # one untimed query warms the vector store and the caches
            rank_documents(searcher, data.queries[qids[0]], mode)
        for n, qid in enumerate(qids, 1):
            t0 = time.perf_counter()
            runs[qid] = rank_documents(searcher, data.queries[qid], mode)
            times.append((time.perf_counter() - t0) * 1000)
            report(progress, "Queries", n, len(qids))
    per_query = {qid: score_query([d for d, _ in runs[qid]], data.qrels[qid]) for qid in qids}

    def mean(metric: str) -> float:
        return sum(p[metric] for p in per_query.values()) / len(per_query) if per_query else 0.0

    if run_file is not None:
        write_run(run_file, runs, f"ragcli-{mode}")
    return EvalReport(dataset=str(folder), mode=mode, queries=len(qids), ndcg_10=mean("ndcg@10"),
                      recall_10=mean("recall@10"), recall_100=mean("recall@100"), mrr_10=mean("mrr@10"),
                      docs=docs, chunks=chunks, embedded=embedded, index_seconds=index_seconds,
                      query_ms_p50=percentile(times, 50), query_ms_p95=percentile(times, 95),
                      index_dir=str(econfig.index_dir), per_query=per_query)
