"""What the evidence step reads of a unit: the text the embedding model embeds (``unit_context``),
the texts a passage cache holds for a chunk (``evidence_passages``), and the share of the
question's words a unit holds (``word_scores``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..types import Chunk, Hit
from ..words import query_terms
from .sections import heading_text
from .units import Unit, split_units


def evidence_passages(chunks: Iterable[Chunk]) -> list[str]:
    """The texts evidence embeds for these chunks when they are hits: each unit in its
    context, and the chunk's section heading (what a pre-filled passage cache holds)."""
    texts: dict[str, None] = {}
    for chunk in chunks:
        texts.update(dict.fromkeys(unit_context(u) for u in split_units(Hit(chunk, 1.0, 1))))
        texts[heading_text(chunk.title, chunk.heading)] = None
    return list(texts)


def unit_context(unit: Unit) -> str:
    """What the embedding model reads for a unit: where it stands, then the unit."""
    chunk = unit.chunk
    head = chunk.heading or chunk.title
    if chunk.title and not head.startswith(chunk.title):
        head = f"{chunk.title} > {head}"
    body = f"{unit.context}\n{unit.text}" if unit.context else unit.text
    return f"{head}\n{body}" if head else body


def word_scores(question: str, units: Sequence[Unit], idf: Callable[[list[str]], dict[str, float]]) -> list[float]:
    """Share of the question's idf-weighted content words each unit holds (with its heading)."""
    terms = sorted(query_terms(question))
    if not terms:
        return [0.0] * len(units)
    # idf + 1: a rare word counts more, and a word in every chunk of a small index still counts.
    weights = {t: w + 1.0 for t, w in idf(terms).items()}
    total = sum(weights.get(t, 1.0) for t in terms) or 1.0
    scores = []
    for unit in units:
        have = query_terms(f"{unit.chunk.title} {unit.chunk.heading} {unit.context} {unit.text}")
        scores.append(sum(weights.get(t, 1.0) for t in terms if t in have) / total)
    return scores
