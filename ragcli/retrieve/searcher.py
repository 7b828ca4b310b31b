"""Search the index: vector (Chroma), keyword (SQLite FTS5), or both fused.

Filters are resolved to the set of matching files first and applied inside both
searches, so a filter never empties a result that a top-k cut made before it.

Hybrid search, in four steps:
1. candidates: the top ``n`` chunks by cosine (Chroma) and the top ``n`` by bm25 (FTS5);
2. completion: every candidate gets *both* scores. A chunk only the keyword side found
   gets its exact cosine (from the manifest's vector cache), one only the vector side
   found gets its exact bm25 (0 when it matches no query term). Fusion then compares
   like with like instead of treating "not in the other top n" as "irrelevant";
3. note evidence: each candidate's cosine gets ``note_weight`` times the query's cosine
   with its note's centroid (the mean of the note's chunk vectors), so a passage worded
   unlike the question still ranks when its note as a whole is about what was asked;
4. fusion: a convex combination of the two scores, each normalised over the candidate
   pool of this query (Bruch et al., "An Analysis of Fusion Functions for Hybrid
   Retrieval", 2023: convex combination beats RRF and needs one parameter). The keyword
   side's weight shrinks when its best match covers less than ``full_keyword_cover`` of
   the query: a question in the user's own words shares a word or two with many notes by
   chance, and those matches should not outvote the vectors.

The variants this was chosen over (reciprocal rank fusion, partial scores, other scalings)
are in ``bench/fusion_variants.py``, as ``Fusion`` subclasses the benches compare.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..config import MODES, Config
from ..errors import UsageError
from ..store import Index
from ..types import Hit
from ..words import without_notes_frame
from .acronyms import spelled_out
from .fusion import ALPHA, FULL_KEYWORD_COVER, NOTE_WEIGHT, fts_query, fuse_convex
from .ranking import KeywordRanker
from .spelling import is_known_word

CANDIDATES = 50  # per side, before fusion
# The first places of a search that stand on distinct PDF pages (pages_first): the sources a
# reader reads first, and the hits whose sections and pages evidence reads further (SECTION_HITS).
PAGE_PLACES = 3
# "OPM's most recent annual performance report", "the latest quarterly filing": the latest
# period of that kind of document, not whichever of them words the answer best
_LATEST = re.compile(r"\b(?:most recent|latest|newest)\b", re.I)
PASSAGE_CACHE = 4096  # evidence passages' vectors kept between questions (1.5 kB each at 384 dims)

@dataclass(frozen=True)
class Filters:
    path: str | None = None  # glob on the absolute path ("*/Projects/*"), or a suffix
    tag: str | None = None
    since: str | None = None  # ISO date, inclusive
    until: str | None = None

    def active(self) -> bool:
        return any((self.path, self.tag, self.since, self.until))


@dataclass(frozen=True)
class Fusion:
    """How hybrid mode combines its two sides (the default is what ``rag`` ships)."""

    alpha: float = ALPHA
    # the keyword side's weight shrinks when its best match covers less of the query than
    # this (normalised bm25); 0 = a fixed weight
    full_keyword_cover: float = FULL_KEYWORD_COVER
    # note-level evidence: this times the query's cosine with the centroid of the chunk's
    # note is added to the chunk's cosine; 0 = chunks alone
    note_weight: float = NOTE_WEIGHT
    # a query word in no chunk is searched as the indexed term a spelling slip away
    respell: bool = True

    def fuse(self, vec: list[tuple[str, float]], kw: list[tuple[str, float]], evidence: dict[str, float],
             kw_scores: dict[str, float], scale: float | None,
             unvectored: frozenset[str] = frozenset(),
             on_pages: frozenset[str] = frozenset()) -> list[tuple[str, float]]:
        """Rank the candidates: ``vec`` and ``kw`` are each side's own ranked candidates,
        ``evidence`` and ``kw_scores`` every candidate's cosine (with its note's evidence)
        and bm25, ``scale`` the bm25 of an average chunk holding every query term once (the
        sum of the terms' idf, as FTS5's bm25 has k1 = 1.2); ``unvectored``: candidates not
        embedded yet (ranked by their keywords alone, ``fuse_convex``)."""
        return fuse_convex(evidence, kw_scores, self.alpha, scale, self.full_keyword_cover, unvectored, on_pages)


class Searcher:
    """Holds the index and the embedder between queries (chat, eval, the watcher's readers)."""

    def __init__(self, config: Config, index: Index | None = None, embedder=None,
                 fusion: Fusion | None = None):
        self.config = config
        self.index = index or Index.open_reader(config)
        self._embedder = embedder
        self._own_embedder = embedder is None  # one it loads itself, it closes
        self.fusion = fusion or Fusion()
        self._ranker = KeywordRanker(self.index)
        self._passages: OrderedDict[str, np.ndarray] = OrderedDict()
        self._on_disk = None  # the passage cache beside the index, opened when first needed

    def close(self) -> None:
        embedder, self._embedder = (self._embedder if self._own_embedder else None), None
        try:
            if self._on_disk is not None:
                self._on_disk.close()
            self._ranker.close()
            self.index.close()
        finally:
            if embedder is not None:
                embedder.close()

    @property
    def embedder(self):
        if self._embedder is None:
            from ..embed import make_embedder, same_vectors

            embedder = make_embedder(self.config)
            self.index.check_model(embedder.model_id, embedder.dim, embedder.settings, same_vectors(self.config))
            self._embedder = embedder
        return self._embedder

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of evidence passages, remembered between questions: a chat's follow-ups and
        a watcher's next questions quote the same notes again, and embedding the candidate
        passages is most of the time to the first quote. Those not in memory are read from the
        cache beside the index (``store.passages``), and only the rest are embedded."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._passages]
        fresh = self._passages_on_disk(missing) if missing else {}
        vectors = np.stack([fresh[t] if t in fresh else self._passages[t] for t in texts])
        for t in texts:
            self._passages[t] = fresh.get(t, self._passages.get(t))
            self._passages.move_to_end(t)
        while len(self._passages) > PASSAGE_CACHE:
            self._passages.popitem(last=False)
        return vectors

    def _passages_on_disk(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Vectors of ``texts`` from the passage cache, the rest embedded and written there."""
        embedder = self.embedder
        if self._on_disk is None:
            from ..store.passages import open_passages

            self._on_disk = open_passages(self.config.index_dir, embedder)
        return self._on_disk.vectors(texts, embedder)[0]

    def search(self, query: str, k: int = 10, mode: str | None = None,
               filters: Filters | None = None, candidates: int | None = None) -> list[Hit]:
        """The top ``k`` chunks; ``candidates`` per side before fusion (default max(50, k))."""
        mode = mode or self.config.mode
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", hint=f"Use one of: {', '.join(MODES)}")
        query = without_notes_frame(query.strip())  # "what did I write about X?" searches for X
        if not query or k <= 0:
            return []
        n = max(candidates or CANDIDATES, k)
        paths = self._allowed_paths(filters)
        if paths is not None and not paths:
            return []
        # the keyword side reads a name's initials too, as the page does
        match = self._respelled(fts_query(self.with_initials(query))) if mode != "vector" else ""
        if mode == "hybrid":
            hits = self._hybrid(query, match, k, n, paths)
        elif mode == "keyword":
            kw = self._ranker.start(match, n, paths)() if match else []
            hits = self._hits(kw, {}, dict(kw), k)
        else:
            qvec = self.embedder.embed_queries([query])[0]
            cosines = dict(self.index.vector_search(qvec, n, paths))
            ranked = sorted(self._with_notes(qvec, cosines).items(), key=lambda item: (-item[1], item[0]))
            hits = self._hits(ranked, cosines, {}, k)
        if paths is None and _LATEST.search(query):
            return self._latest_of_its_kind(query, hits, k, mode, candidates)
        return hits

    def _latest_of_its_kind(self, query: str, hits: list[Hit], k: int, mode: str,
                            candidates: int | None) -> list[Hit]:
        """For a question about the most recent of something: the hits of the latest-dated
        file of the top hit's kind (the same title but for its period, and the same tags but
        for its period's: "Annual Performance Report Fiscal Year 2022", tag "opm"), searched
        within it, before the rest; the older files of that kind are left out. The top hit's
        file often words the answer best (OPM's engagement score is in FY 2016's report as in
        FY 2022's), but a reader who says "the most recent" means the latest period."""
        dated = self.index.dated_files()
        top = next((h.chunk.path for h in hits if h.chunk.path in dated), None)
        kind = _kind(*dated[top][1:]) if top is not None else None
        if not kind or not kind[0]:
            return hits
        kin = [path for path, (_date, title, tags) in dated.items() if _kind(title, tags) == kind]
        latest = max(kin, key=lambda path: dated[path][0])
        if dated[latest][0] <= dated[top][0]:
            return hits
        within = self.search(query, k, mode, Filters(path=_glob_literal(latest)), candidates)
        rest = [h for h in hits if h.chunk.path not in kin]
        return [replace(h, rank=n) for n, h in enumerate((within + rest)[:k], 1)]

    def _hybrid(self, query: str, match: str, k: int, n: int, paths: list[str] | None) -> list[Hit]:
        """Both sides' candidates, completed and fused (see the module's docstring).

        The keyword top is ranked on other threads (``ranking``) while this one embeds the
        query, searches vectors and scores the vector candidates' keywords."""
        top = self._ranker.start(match, n, paths) if match else None
        qvec = self.embedder.embed_queries([query])[0]
        vec = self.index.vector_search(qvec, n, paths)
        found = self.index.keyword_scores(match, [c for c, _ in vec]) if match else {}
        scale = sum(self.index.keyword_idf(match.split(" OR "))) if match else None
        kw = top() if top is not None else []
        vec_scores, kw_scores = dict(vec), dict(kw)
        # every candidate gets both scores (0: it matches no query term)
        vec_scores.update(self.cosines(qvec, [c for c in kw_scores if c not in vec_scores]))
        kw_scores.update({c: found.get(c, 0.0) for c in vec_scores if c not in kw_scores})
        # keyword candidates with no cosine have no vector yet (phase two of `rag index` is on)
        unvectored = frozenset(c for c in kw_scores if c not in vec_scores)
        evidence = self._with_notes(qvec, vec_scores)
        pages = self.index.chunk_pages(list(kw_scores))  # every candidate: kw_scores holds both sides
        # passed only when there are some, so a Fusion written for the plain call still fuses
        extra = {name: ids for name, ids in (("unvectored", unvectored), ("on_pages", frozenset(pages))) if ids}
        ranked = self.fusion.fuse(vec, kw, evidence, kw_scores, scale, **extra)
        return self._hits(ranked, vec_scores, kw_scores, k, pages)

    def with_initials(self, query: str) -> str:
        """The query, then the initials of each name it spells out that the notes shorten
        ("... federal employees health benefits premiums ... (FEHB)"; ``acronyms``)."""
        short = spelled_out(query, self.index.holds_phrase)
        return f"{query} ({', '.join(a.upper() for a in short)})" if short else query

    def _respelled(self, match: str) -> str:
        """The keyword query with each word that is in no chunk replaced by the indexed term
        a spelling slip away ("syncronize" -> "synchron"*), when there is one. Real words
        (the embedding model's vocabulary) are left alone: "movie" in no note is not "move"."""
        if not match or not self.fusion.respell:
            return match
        terms = match.split(" OR ")
        fixes = self.index.respell([t.strip('"') for t in terms], leave=is_known_word)
        return " OR ".join(f'"{fixes[w]}"*' if (w := t.strip('"')) in fixes else t for t in terms)

    def _with_notes(self, qvec: np.ndarray, cosines: dict[str, float]) -> dict[str, float]:
        """Each candidate's cosine plus its note's evidence: the query's cosine with the
        centroid of the note's chunks, times ``note_weight``. A passage worded unlike the
        question still ranks when its note as a whole is about what was asked, and of two
        equal passages the one in the note about the subject wins. A note without a centroid
        (an index built before them) counts its chunk's own cosine instead."""
        weight = self.fusion.note_weight
        if not cosines or not weight:
            return cosines
        centroids = self.index.note_centroids(list(cosines))
        q = np.asarray(qvec, dtype=np.float32)
        return {cid: cos + weight * (float(centroids[cid] @ q) if cid in centroids else cos)
                for cid, cos in cosines.items()}

    def cosines(self, qvec: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
        """Exact cosine of the query with chunks, from the manifest's vector cache."""
        return self.index.cosines(qvec, ids)

    def _allowed_paths(self, filters: Filters | None) -> list[str] | None:
        if not filters or not filters.active():
            return None
        return self.index.filter_paths(filters.path, filters.tag, filters.since, filters.until)

    def _hits(self, ranked: list[tuple[str, float]], vec: dict, kw: dict, k: int,
              pages: dict[str, tuple[str, int]] | None = None) -> list[Hit]:
        """The first ``k`` of the ranking as hits, the first places on distinct PDF pages
        (``pages_first``; ``pages``: the candidates' pages, when already read)."""
        if pages is None:
            pages = self.index.chunk_pages([cid for cid, _ in ranked])
        ranked = pages_first(ranked, pages)[:k]
        chunks = self.index.chunks([cid for cid, _ in ranked])
        hits = []
        for cid, score in ranked:
            if cid in chunks:  # a chunk Chroma still knows but the manifest dropped is skipped
                hits.append(Hit(chunks[cid], float(score), len(hits) + 1, vec.get(cid), kw.get(cid)))
        return hits


def pages_first(ranked: list[tuple[str, float]], pages: dict[str, tuple[str, int]],
                places: int = PAGE_PLACES) -> list[tuple[str, float]]:
    """The ranking with the first ``places`` on distinct PDF pages, the rest in rank order
    after them. A page is one source to the reader, and a long report's best page often holds
    two or three chunks that all rank high (a table's lines and its rows, a paragraph cut in
    two): they took the first places from the next pages. Past those places, the page's other
    chunks come back in their rank, because the answer is often in the second half of the cut
    paragraph: deferring them past every page's first cost ``rag ask`` a key figure on the
    reports (rp-23's "219 of 422" and rp-18's row fell out of its 5 hits; facts shown 0.669 ->
    0.662). ``pages``: the (path, page) of the chunks on a PDF page; a note's chunks (no page)
    keep their places. Reports' tune half (bench/ISSUE20.md): page hit@3 0.88 -> 0.91 (0.79 ->
    0.82 before the labels were reviewed); check half the same."""
    first: list[tuple[str, float]] = []
    rest: list[tuple[str, float]] = []
    seen: set[tuple[str, int]] = set()
    for cid, score in ranked:
        page = pages.get(cid)
        if len(first) < places and page not in seen:
            first.append((cid, score))
            if page is not None:
                seen.add(page)
        else:
            rest.append((cid, score))
    return first + rest


def _glob_literal(path: str) -> str:
    """``path`` as a GLOB pattern that matches it alone."""
    return re.sub(r"([*?\[])", r"[\1]", path)


# what tells two files of one kind apart: their period ("Fiscal Year 2016", "Q2", "fy2016")
_PERIOD_WORDS = re.compile(r"\b(?:fy|fiscal|year|years|annual|quarter|quarterly|q[1-4]|first|second|third|fourth|"
                           r"months?|ended|edition|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|"
                           r"oct\w*|nov\w*|dec\w*)\b|[^a-z]+")


def _kind(title: str, tags: frozenset[str]) -> tuple[str, frozenset[str]]:
    """A dated file's kind: its title without its period, and its tags without a figure."""
    return (" ".join(_PERIOD_WORDS.sub(" ", title.lower()).split()),
            frozenset(t for t in tags if not any(c.isdigit() for c in t)))
