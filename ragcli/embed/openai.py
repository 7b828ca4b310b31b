"""``OpenAIEmbedder``: embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint
(``embed_url``): llama.cpp's server or llama-cpp-python's, Ollama, vLLM, text-embeddings-inference.

What it must get right, since an index must never mix the vectors of two models:
- identity. ``model_id`` is ``remote:<embed_model or "default">@<the model the server says it
  ran>`` and ``dim`` is the length of the vector a probe gets back when the embedder starts;
  both go into the index fingerprint, so an index built with another model is refused
  (``rag index --rebuild``). Every later answer is checked against them too: a server that
  starts serving another model in the middle of a run is a ``ModelError``, never a mixed index.
- vectors. The server pools (mean for MiniLM: the GGUF says so) and this class L2-normalises:
  llama-cpp-python's server returns the raw pooled vector, Ollama and TEI normalise, so
  normalising here makes them all the unit rows the index expects. The same GGUF served by
  ``python -m llama_cpp.server --embedding true`` gives the in-process vectors to cosine 1.0000.
- tokens. There is no tokenizer on this side, so ``count_tokens`` estimates, erring high:
  every word, punctuation mark or underscore counts one token per 3 bytes of UTF-8 (at
  least one), plus 10%. On 25,000 windows of 300-800 characters of the corpora (Obsidian
  help, MDN, SciFact, PDFs) it was 1.47x MiniLM's real WordPiece count at the median and
  below it on 0.14% (base64 blobs and Latin placeholder text, down to 0.55x). So chunks
  come out about a third smaller than in-process; the chunk budget (``chunk_tokens``, 200)
  under the server's ``embed_max_tokens`` (256) leaves room for the rest, and a server
  truncates what is still longer (llama.cpp's does).
- failures. Connection errors, timeouts, HTTP 408/429/5xx are retried with exponential backoff
  (``Retry-After`` honoured, capped), a bounded number of times, then ``ModelServerDown``; any
  other answer that is not embeddings is a ``ModelError`` at once, with the server's words.

HTTP through ``httpx``, one client per embedder: a run's requests reuse one connection.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import httpx
import numpy as np

from ..errors import ModelError, ModelServerDown

BATCH = 32  # texts per request
RETRIES = 4  # after the first attempt: waits 0.5, 1, 2, 4 s
MAX_WAIT = 30.0  # the longest a Retry-After is honoured
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_PIECE = re.compile(r"[^\W_]+|[^\w\s]|_")  # WordPiece splits words at punctuation and "_"
_PROBE = "What is the dimension of this model's vectors?"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as a WordPiece/BPE model would count them, erring high."""
    pieces = sum(max(1, math.ceil(len(piece.encode("utf-8")) / 3)) for piece in _PIECE.findall(text))
    return math.ceil(pieces * 1.1)


class OpenAIEmbedder:
    """Sentence vectors from an embeddings server (`embed_url`, e.g. http://127.0.0.1:8080/v1)."""

    def __init__(self, base_url: str, *, model: str = "", api_key: str = "", max_tokens: int = 256,
                 batch_size: int = BATCH, timeout: float = 60.0, retries: int = RETRIES, backoff: float = 0.5,
                 query_prefix: str = "", document_prefix: str = ""):
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelError(f"embed_url must be an http(s) URL, got {base_url!r}",
                             hint="For example: http://127.0.0.1:8080/v1")
        path = parts.path or "/v1"
        self.url = base_url.rstrip("/")
        self._endpoint = parts._replace(path=path if path.endswith("/embeddings") else path + "/embeddings").geturl()
        self.model = model
        self.max_tokens = max_tokens
        self.batch_size = max(1, batch_size)
        self.retries = retries
        self.backoff = backoff
        # The server pools as its model says; only the prefixes (e5, bge, nomic want them) are
        # ours to add, and they are fingerprinted like the local model's.
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(timeout=timeout, headers=headers)
        # The probe learns the dimension and the server's model. It is retried once only: a
        # server that is not there at start is most often a wrong URL, and the user waits.
        try:
            vectors, self.server_model = self._request([_PROBE], retries=min(1, retries))
        except BaseException:
            self._client.close()
            raise
        self.dim = int(vectors.shape[1])
        self.model_id = f"remote:{model or 'default'}@{self.server_model}"

    # -- the protocol -----------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            part = list(texts[start:start + self.batch_size])
            vectors, served = self._request(part, retries=self.retries)
            if served != self.server_model or vectors.shape[1] != self.dim:
                raise ModelError(f"the embedding server at {self.url} now serves {served!r} "
                                 f"({vectors.shape[1]}-d); this run started with {self.server_model!r} "
                                 f"({self.dim}-d)",
                                 hint="Point embed_url back at the server with the index's model, "
                                      "or start over with: rag index --rebuild")
            out[start:start + len(part)] = vectors
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed([self.query_prefix + t for t in texts])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed([self.document_prefix + t for t in texts])

    @property
    def settings(self) -> dict[str, str]:
        """The prefixes in use, where set: they shape the vectors, so they are fingerprinted."""
        mine = {"query_prefix": self.query_prefix, "document_prefix": self.document_prefix}
        return {k: v for k, v in mine.items() if v}

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    @property
    def token_counter(self):
        """``count_tokens`` for another process (phase one's chunking workers): picklable."""
        return estimate_tokens

    def close(self) -> None:
        self._client.close()

    # -- HTTP -------------------------------------------------------------------------------
    def _request(self, texts: list[str], retries: int) -> tuple[np.ndarray, str]:
        """(raw vectors, the model the server reports) for ``texts``, retrying what may pass."""
        body: dict = {"input": texts}
        if self.model:
            body["model"] = self.model
        wait = self.backoff
        failure = ""
        for attempt in range(retries + 1):
            retry_after = None
            try:
                resp = self._client.post(self._endpoint, json=body)
            except httpx.TransportError as exc:  # refused, reset, timed out
                failure = f"{type(exc).__name__}: {exc}"
            else:
                status, data = resp.status_code, resp.content
                if status == 200:
                    return self._parse(data, len(texts))
                detail = " ".join(data[:400].decode("utf-8", "replace").split())
                if status not in RETRY_STATUS:
                    raise ModelError(f"the embedding server at {self.url} answered HTTP {status}: {detail}",
                                     hint="Check embed_url (it ends in /v1), embed_api_key and the model "
                                          "name (embed_model).")
                failure = f"HTTP {status}: {detail}"
                retry_after = _seconds(resp.headers.get("Retry-After"))
            if attempt < retries:
                time.sleep(min(MAX_WAIT, retry_after if retry_after is not None else wait))
                wait *= 2
        raise ModelServerDown(f"the embedding server at {self.url} did not answer after "
                              f"{retries + 1} attempt(s): {failure}")

    def _parse(self, data: bytes, n: int) -> tuple[np.ndarray, str]:
        try:
            doc = json.loads(data)
            items = sorted(doc["data"], key=lambda item: item.get("index", 0))
            vectors = np.asarray([item["embedding"] for item in items], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelError(f"the embedding server at {self.url} did not send OpenAI-style embeddings "
                             f"({type(exc).__name__}: {exc})",
                             hint="embed_url must point at an OpenAI-compatible /v1 API.") from None
        if vectors.ndim != 2 or vectors.shape[0] != n or vectors.shape[1] == 0:
            raise ModelError(f"the embedding server at {self.url} sent vectors shaped {vectors.shape} for "
                             f"{n} text(s)",
                             hint="Serve an embedding model that pools one vector per text (e.g. "
                                  "llama.cpp with --pooling mean).")
        return vectors, str(doc.get("model") or self.model or "unknown")


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:  # an HTTP date: wait the usual backoff instead
        return None
