"""Citations in a generated answer: only sources that exist, streamed as they are checked."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..words import query_terms
from .base import OnToken

CITATION = re.compile(r"\[(\d{1,3})\]")


class CitationFilter:
    """Wraps a token callback: holds back `[...]` until it closes, then passes on only
    citations of real sources, so what streams equals the checked answer."""

    def __init__(self, n_sources: int, on_token: OnToken | None):
        self.n_sources, self.on_token = n_sources, on_token
        self.pending = ""
        self.parts: list[str] = []
        self.removed: list[str] = []

    def _emit(self, text: str) -> None:
        if text:
            self.parts.append(text)
            if self.on_token is not None:
                self.on_token(text)

    def feed(self, piece: str) -> None:
        self.pending += piece
        while self.pending:
            i = self.pending.find("[")
            if i < 0:
                self._emit(self.pending)
                self.pending = ""
                return
            self._emit(self.pending[:i])
            self.pending = self.pending[i:]
            m = re.match(r"\[(\d{0,3})(\]?)", self.pending)
            if m and not m.group(2) and m.end() == len(self.pending):
                return  # an unfinished "[12": wait for more
            if m and m.group(2) and m.group(1):
                n = int(m.group(1))
                if 1 <= n <= self.n_sources:
                    self._emit(m.group(0))
                else:
                    self.removed.append(m.group(0))
                self.pending = self.pending[m.end():]
            else:  # a bracket that is not a citation
                self._emit("[")
                self.pending = self.pending[1:]

    def finish(self) -> str:
        self._emit(self.pending)
        self.pending = ""
        text = "".join(self.parts)
        return re.sub(r"[ \t]+([.,;:])", r"\1", text) if self.removed else text


def check_citations(text: str, n_sources: int) -> tuple[str, list[int], list[str]]:
    """Remove citations of sources that do not exist; return (text, cited, removed)."""
    f = CitationFilter(n_sources, None)
    f.feed(text)
    clean = f.finish()
    cited = sorted({int(n) for n in CITATION.findall(clean)})
    return clean, cited, f.removed


def attribute(text: str, texts: Sequence[str], min_share: float = 0.2) -> list[int]:
    """Sources (1-based) whose words the answer uses most, for an answer that cites none."""
    words = query_terms(text)
    if not words:
        return []
    overlaps = [len(words & query_terms(t)) / len(words) for t in texts]
    if not overlaps or max(overlaps) < min_share:
        return []
    top = max(overlaps)
    return [i + 1 for i, o in enumerate(overlaps) if o >= max(min_share, 0.75 * top)][:2]


