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


def is_common_word(word: str) -> bool:
    """Is this word (or the word a plain ending was added to) among the ``COMMON_WORDS``
    commonest whole words of the built-in embedding model's vocabulary? False when it is
    unavailable."""
    ranks = _ranks()
    return ranks is not None and any(ranks.get(w, COMMON_WORDS) < COMMON_WORDS for w in _forms(word))


def is_known_word(word: str) -> bool:
    """An English word (or a plain inflection of one) from the built-in embedding model's
    WordPiece vocabulary: a real word that is in no note is not a spelling slip to fix.
    True when the vocabulary is unavailable, so nothing is "fixed" blindly."""
    vocab = _ranks()
    return vocab is None or any(w in vocab for w in _forms(word))


def _forms(word: str) -> list[str]:
    """The word, lower case, and the words a plain ending may have been added to."""
    word = word.lower()
    return [word] + [word[: -len(e)] for e in _ENDINGS if word.endswith(e) and len(word) - len(e) >= 4]


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
