"""Counting a GGUF model's word pieces, with its vocabulary alone.

The chunker sizes chunks by the embedder's token count. Phase one of `rag index` chunks in
worker processes (``ingest.pool``), which need the same count without the embedder:
``VocabCounter`` pickles as the model's path and loads only the vocabulary (no weights, no
context, nothing on a GPU) in the process that first counts with it. ``count_tokens`` is the
one count both use, so a chunk is cut the same wherever it is cut.

This module imports nothing native at import time: a worker process unpickles the counter
before it has loaded llama.cpp's library, which must come before numpy's (``ragcli.native``).
"""

from __future__ import annotations

from pathlib import Path


def count_tokens(lc, vocab, text: str) -> int:
    """Word pieces of ``text`` without [CLS]/[SEP].

    No buffer: llama.cpp answers "-n" when n tokens do not fit in none. The chunker counts
    ~100k pieces for 1,000 MDN notes; a buffer per count was a third of indexing's first phase
    on the H200 host (tokenize 4.4 of 12.5 s), and this counts 1.7x faster here."""
    raw = text.encode("utf-8", errors="replace")
    n = lc.llama_tokenize(vocab, raw, len(raw), None, 0, False, False)
    return -n if n < 0 else n


class VocabCounter:
    """``count_tokens`` for the GGUF at ``path``, loading its vocabulary on the first count."""

    def __init__(self, path: Path | str):
        self.path = str(path)
        self._lc = self._model = self._vocab = None

    def __getstate__(self) -> dict:
        return {"path": self.path}  # a loaded vocabulary is a pointer: the other process loads its own

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["path"])

    def __call__(self, text: str) -> int:
        if self._vocab is None:
            self._load()
        return count_tokens(self._lc, self._vocab, text)

    def _load(self) -> None:
        from ..errors import ModelError
        from .llama import load_llama_cpp

        lc = load_llama_cpp(bindings_only=True)
        lc.llama_backend_init()
        params = lc.llama_model_default_params()
        params.vocab_only = True
        model = lc.llama_model_load_from_file(self.path.encode(), params)
        if not model:
            raise ModelError(f"llama.cpp could not read the vocabulary of {self.path}")
        self._lc, self._model, self._vocab = lc, model, lc.llama_model_get_vocab(model)
