"""Embeddings: the ``Embedder`` protocol and the factory that picks one from the config.

``embed.llama`` holds ``LlamaEmbedder`` (llama.cpp, in process); ``embed.builtin`` turns
the packaged all-MiniLM-L6-v2 weights into a verified GGUF on first use; ``embed.openai``
holds ``OpenAIEmbedder``, for an OpenAI-compatible embeddings server (``embed_url``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from ..config import Config
from ..progress import ProgressFn

class Embedder(Protocol):
    model_id: str  # stable id of the model, part of the index fingerprint
    dim: int
    max_tokens: int  # the most word pieces a chunk may have (without special tokens)
    query_prefix: str  # put before each query ("" for MiniLM)
    document_prefix: str  # put before each chunk that is indexed ("" for MiniLM)
    settings: dict[str, str]  # pooling and prefixes that differ from the model's own (fingerprinted)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, L2-normalised rows, of the texts as they are."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Like ``embed``, with the query prefix: what search uses."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Like ``embed``, with the document prefix: what indexing uses."""

    def count_tokens(self, text: str) -> int:
        """Model tokens in ``text``, without special tokens."""

    def close(self) -> None:
        """Free the model (contexts, weights)."""


def file_digest(path: Path) -> str:
    """sha256 of a model file (hex); large files are sampled so this stays fast."""
    size = path.stat().st_size
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        if size <= 256 << 20:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        else:  # header (metadata, tensor table) + evenly spaced samples of the weights
            for i in range(64):
                handle.seek(size * i // 64)
                digest.update(handle.read(1 << 20))
    return digest.hexdigest()


_digests: dict[tuple[str, int, int], str] = {}


def model_id_for(path: Path, name: str, cache_dir: Path | None = None) -> str:
    """``name@<12 hex of sha256>``: changes whenever the weights change. ``cache_dir``: where
    digests of checked files are remembered between processes (``models.known``); only a
    caller that has checked the file as a GGUF passes it."""
    from ..models.known import known_digest, remember_digest

    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        digest = known_digest(path, cache_dir)
        if digest is None:
            digest = file_digest(path)
            remember_digest(path, digest, cache_dir)
        _digests[key] = digest
    return f"{name}@{_digests[key][:12]}"


def same_vectors(config: Config) -> tuple[str, ...]:
    """The ids of the built-in model's earlier conversions still in ``models_dir`` that embed as
    today's does: an index one of them built is taken over, not rebuilt. The built-in ran as F16
    until F32 became the default (``models.convert``): the same vectors (cosine 0.999999)."""
    if config.embed_model or config.embed_url:
        return ()
    from ..models.convert import builtin_embed_path
    from ..models.packages import EMBED_NAME

    earlier = builtin_embed_path(config, "f16")
    return (model_id_for(earlier, EMBED_NAME, Path(config.models_dir)),) if earlier.is_file() else ()


def vector_space(embedder: Embedder) -> str:
    """What a cached chunk vector is keyed by besides its text: the model, and the pooling
    and document prefix when they differ from the model's own (so a --rebuild with other
    settings never reuses a vector made the old way). The model id alone otherwise, which
    keeps the vectors cached before these settings existed."""
    shaping = {k: v for k, v in sorted(embedder.settings.items()) if k != "query_prefix"}
    return embedder.model_id + "".join(f"|{k}={v}" for k, v in shaping.items())


def make_embedder(config: Config, progress: ProgressFn | None = None) -> Embedder:
    """The embedder the configuration asks for: a server when embed_url is set (embed_model
    then names the server's model), else the built-in MiniLM unless embed_model is set."""
    if config.embed_url:
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder(config.embed_url, model=config.embed_model, api_key=config.embed_api_key,
                              max_tokens=config.embed_max_tokens,
                              query_prefix=config.embed_query_prefix or "",
                              document_prefix=config.embed_document_prefix or "")
    from ..models.packages import EMBED_NAME
    from .builtin import resolve_embed_model
    from .llama import MINILM_MAX_TOKENS, LlamaEmbedder

    spec = resolve_embed_model(config, progress)
    builtin = not config.embed_model
    name = EMBED_NAME if builtin else spec.path.stem
    usage = embedding_usage(config)
    return LlamaEmbedder(
        spec.path,
        model_id=model_id_for(spec.path, name, config.models_dir),
        n_threads=config.n_threads,
        n_gpu_layers=config.n_gpu_layers,
        max_tokens=MINILM_MAX_TOKENS if builtin else usage["max_tokens"],
        pooling=usage["pooling"],
        query_prefix=usage["query_prefix"],
        document_prefix=usage["document_prefix"],
    )


def embedding_usage(config: Config) -> dict:
    """Pooling, prefixes and token limit for the configured model: what the user set, else
    the catalogue's for a model `rag models pull` knows (by short name, or the file it saved:
    bge and arctic want a query instruction and CLS pooling, nomic "search_query: " /
    "search_document: "), else the model's own (no prefixes, the GGUF's pooling). An empty
    string set on purpose (config.toml ``embed_query_prefix = ""``) is kept: it is set."""
    from ..models.catalog import embed_entry

    known = embed_entry(config.embed_model) if not config.embed_url else None
    chosen = {"pooling": config.embed_pooling, "query_prefix": config.embed_query_prefix,
              "document_prefix": config.embed_document_prefix}
    own = {"pooling": known.pooling if known else "", "query_prefix": known.query_prefix if known else "",
           "document_prefix": known.document_prefix if known else ""}
    usage: dict = {k: own[k] if v is None else v for k, v in chosen.items()}
    usage["max_tokens"] = known.max_tokens - 2 if known and known.max_tokens else None
    return usage
