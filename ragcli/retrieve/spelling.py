"""Which query words are real words, and which are everyday ones, read from the built-in
embedding model's WordPiece vocabulary: a real word that is in no note is not a spelling slip to
fix ("movie" in no note is not "move"; ``store.keywords.respell`` asks this last), and an everyday
word in no note is more often the asker's phrasing than a subject the notes lack.

Apart from ``words`` (the answer side's regular expressions, ~0.02 s to compile) so that a
one-off `rag search` does not load them.
"""

from __future__ import annotations

import functools

_ENDINGS = ("s", "es", "ed", "ing", "ly", "able", "ion", "ions")


# BERT's vocabulary lists its whole words commonest first ("the", "of", "and", ...). Among the
# first 4,000: "money", "movie", "tiny", "spot", "birthday"; past them: "frost", "wrist", "swap",
# "descale", "flashcards" (bench/ISSUE19.md, session 34).
COMMON_WORDS = 4000


def is_common_word(word: str, most: int = COMMON_WORDS) -> bool:
    """Is this word (or the word a plain ending was added to) among the ``most`` commonest
    whole words of the built-in embedding model's vocabulary? False when it is unavailable."""
    ranks = _ranks()
    if ranks is None:
        return False
    word = word.lower()
    found = [ranks[w] for w in [word] + [word[: -len(e)] for e in _ENDINGS
                                         if word.endswith(e) and len(word) - len(e) >= 4] if w in ranks]
    return bool(found) and min(found) < most


def is_known_word(word: str) -> bool:
    """An English word (or a plain inflection of one) from the built-in embedding model's
    WordPiece vocabulary: a real word that is in no note is not a spelling slip to fix.
    True when the vocabulary is unavailable, so nothing is "fixed" blindly."""
    vocab = _ranks()
    if vocab is None:
        return True
    word = word.lower()
    return word in vocab or any(word.endswith(e) and word[: -len(e)] in vocab
                                for e in _ENDINGS if len(word) - len(e) >= 4)


@functools.lru_cache(maxsize=1)
def _ranks() -> dict[str, int] | None:
    """Each whole word of the vocabulary (letters only) with its place among them, commonest 0."""
    from ..models.packages import embed_source_dir

    folder = embed_source_dir()
    try:
        text = (folder / "vocab.txt").read_text(encoding="utf-8") if folder else None
    except OSError:
        text = None
    if not text:
        return None
    words = (w for w in text.split() if w.isalpha())
    return {w: rank for rank, w in enumerate(dict.fromkeys(w for w in words if len(w) > 1))}
