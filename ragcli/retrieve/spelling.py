"""Which query words are real words: a real word that is in no note is not a spelling slip
to fix ("movie" in no note is not "move"; ``store.keywords.respell`` asks this last).

Apart from ``words`` (the answer side's regular expressions, ~0.02 s to compile) so that a
one-off `rag search` does not load them.
"""

from __future__ import annotations

import functools

_ENDINGS = ("s", "es", "ed", "ing", "ly", "able", "ion", "ions")


def is_known_word(word: str) -> bool:
    """An English word (or a plain inflection of one) from the built-in embedding model's
    WordPiece vocabulary: a real word that is in no note is not a spelling slip to fix.
    True when the vocabulary is unavailable, so nothing is "fixed" blindly."""
    vocab = _vocabulary()
    if vocab is None:
        return True
    word = word.lower()
    return word in vocab or any(word.endswith(e) and word[: -len(e)] in vocab
                                for e in _ENDINGS if len(word) - len(e) >= 4)


@functools.lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str] | None:
    from ..models.packages import embed_source_dir

    folder = embed_source_dir()
    try:
        text = (folder / "vocab.txt").read_text(encoding="utf-8") if folder else None
    except OSError:
        text = None
    return frozenset(w for w in text.split() if w.isalpha()) if text else None
