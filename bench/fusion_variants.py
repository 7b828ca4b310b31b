"""The fusion variants hybrid search was chosen over, for the benches that compare them.

They are not in ``ragcli``: only ``bench_eval.py`` and ``bench_paraphrase.py`` use them. A ``Variant`` is a ``Fusion``
(so ``Searcher`` and ``evaluate`` take it as they take the shipped one) whose ``fuse`` can
rank by reciprocal rank fusion, skip the completion of scores, or scale either side
another way. With the defaults it ranks exactly as the shipped ``Fusion`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragcli.retrieve import Fusion, fuse_convex

RRF_K = 60


def fuse_rrf(vec: list[tuple[str, float]], kw: list[tuple[str, float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of two ranked lists (the classic baseline)."""
    scores: dict[str, float] = {}
    for ranked in (vec, kw):
        for rank, (cid, _s) in enumerate(ranked, 1):
            scores[cid] = scores.get(cid, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class Variant(Fusion):
    method: str = "convex"  # "convex" (normalised scores) or "rrf" (ranks)
    complete: bool = True  # give every candidate both scores before fusing
    # "ideal": bm25 / the bm25 of an average chunk holding every query term once; "minmax"
    keyword_scale: str = "ideal"
    # cosines min-max normalised over the whole "pool", or the vector side's "own" candidates
    # (lower ones, found by the keyword side only, clip to 0)
    vector_scale: str = "pool"

    def fuse(self, vec, kw, evidence, kw_scores, scale):
        if self.method == "rrf":
            return fuse_rrf(vec, kw)
        if not self.complete:  # each side's own candidates only, as found
            evidence, kw_scores = {c: evidence[c] for c, _ in vec}, dict(kw)
        if self.keyword_scale == "minmax":
            scale = None
        own = [evidence[c] for c, _ in vec if c in evidence]
        if self.vector_scale == "own" and own:
            low, span = min(own), max(max(own) - min(own), 1e-9)
            evidence = {c: min(max((s - low) / span, 0.0), 1.0) for c, s in evidence.items()}
        return fuse_convex(evidence, kw_scores, self.alpha, scale, self.full_keyword_cover)
