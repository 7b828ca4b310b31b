"""Content words of a text, crudely stemmed: the shared currency of the word-overlap tests
(the relevance gate, trimming sources for the prompt, attributing an uncited answer, chat's
follow-up detection)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by can do does for from how i if in into is it its me my of on or "
    "the this that to was what when where which who why will with you your yours".split())


def query_terms(text: str) -> set[str]:
    """Content words of a question, crudely stemmed (plural/verb endings)."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word
