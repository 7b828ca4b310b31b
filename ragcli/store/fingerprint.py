"""What built the index: the embedding model (id and dimension), how it was used (pooling
and prefixes, when they differ from the model's own) and the chunker settings.

The index records it on first write and every later run is checked against it, so vectors
of two models or two chunkings are never mixed: a mismatch is explained, with the fix.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from ..errors import IndexMismatchError


@dataclass(frozen=True)
class Fingerprint:
    embedding_model: str  # the embedder's model_id (name@hash of the weights)
    dim: int
    chunker: dict  # chunker version and settings (``ingest.chunk.chunker_settings``)
    # pooling / query_prefix / document_prefix that differ from the model's own (``Embedder.settings``);
    # recorded only when there are some, so indexes built before it was recorded still match
    embedding: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = {"embedding_model": self.embedding_model, "dim": int(self.dim), "chunker": self.chunker}
        if self.embedding:
            data["embedding"] = dict(self.embedding)
        return data


def describe_mismatch(have: dict, wanted: dict) -> str:
    diffs = [f"{k}: index has {have.get(k)!r}, now {wanted.get(k)!r}"
             for k in sorted(set(have) | set(wanted)) if have.get(k) != wanted.get(k)]
    return "the index was built with different settings (" + "; ".join(diffs) + ")"


def mismatch_error(have: dict, wanted: dict) -> IndexMismatchError:
    remote = any(str(d.get("embedding_model") or "").startswith("remote:") for d in (have, wanted))
    if remote:  # an embeddings server (embed_url) built the index, or would search it
        return IndexMismatchError(describe_mismatch(have, wanted),
                                  hint="Point embed_url (RAG_EMBED_URL) at a server with the index's model "
                                       "(or unset it, if the index was built in-process), or rebuild it "
                                       "with: rag index --rebuild")
    return IndexMismatchError(describe_mismatch(have, wanted))


def same_but_for_model(have: dict, wanted: dict, same_vectors: Collection[str]) -> bool:
    """Was the index built as ``wanted`` but by a model of ``same_vectors`` (an earlier
    conversion of the built-in model, whose vectors this one's equal)? Then it is taken over as
    it is: its vectors are the ones this model would make."""
    return (have.get("embedding_model") in same_vectors
            and {**have, "embedding_model": wanted.get("embedding_model")} == wanted)


def chunker_upgraded(had: dict | None, wants: dict) -> bool:
    """Were these chunker settings (``chunker_settings``) cut by an earlier version of ragcli's
    chunker, the user's chunk settings the same? Then ragcli cuts the notes differently than it
    did (a PDF's dot leaders, say), not the user: every file is read again, and the vector cache
    keeps the vectors of the chunks whose text is the same, so few are embedded again. A chunk
    size the user changed is still theirs to rebuild for."""
    had = had or {}
    return had.get("version") != wants.get("version") and {**had, "version": wants.get("version")} == wants


def check_model(have: dict | None, model_id: str, dim: int, settings: dict | None = None,
                same_vectors: Collection[str] = ()) -> None:
    """Raise when an index built by another embedding model (or the same one pooled or
    prefixed otherwise) would be searched with this one."""
    if have is None:
        return
    want = {"embedding_model": model_id, "dim": int(dim), "embedding": dict(settings or {})}
    got = {"embedding_model": have.get("embedding_model"), "dim": have.get("dim"),
           "embedding": have.get("embedding", {})}
    if got != want and not same_but_for_model(got, want, same_vectors):
        raise mismatch_error(got, want)
