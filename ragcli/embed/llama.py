"""Embeddings: the ``Embedder`` protocol and ``LlamaEmbedder``, all-MiniLM-L6-v2 on llama.cpp.

Speed: indexing time is embedding time, so ``LlamaEmbedder`` drives llama.cpp's C API
directly instead of ``Llama.embed()``. Measured with bench/bench_embed.py on the 2-core
box (figures in its docstring); what mattered, biggest first:
- one single-threaded llama.cpp context per core, sharing the model's weights, fed from a
  thread pool (ctypes releases the GIL during ``llama_decode``). One context with two
  threads synchronises at a barrier after every op; on a busy machine the thread that
  waits spins while its partner is descheduled, and it ran 2.5-6x slower than this;
- flash attention on the CPU (1.6x with one chunk per call, 2.5x with packing): no F32
  KQ matrix, no separate softmax pass, and masked cross-sequence pairs are skipped. On a
  GPU it is llama.cpp's to decide (``flash_attention``);
- chunks sorted by length and packed by token count (up to 512 per decode, distinct
  seq_ids, llama.cpp masks attention across them): short texts share a call, while
  ~200-token chunks go one or two per call: ~200 tokens already keep the matmuls busy,
  and attention over a packed micro-batch grows with its square (2,048-token batches
  were 30-40% slower).

``import llama_cpp`` happens inside functions only: ``import ragcli.cli`` must stay fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import queue
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ModelError
from ..models.vocab import VocabCounter, count_tokens
from .numpy_bert import NumpyWorker, blas_controller, load_bert, one_blas_thread

# MiniLM was trained on 256 word pieces including [CLS] and [SEP].
MINILM_MAX_TOKENS = 254
# Tokens per llama_decode call: several chunks share one batch (see module docstring).
DEFAULT_BATCH_TOKENS = 512
# The same on a GPU: on an H200, 256-1,024 tokens a call embed alike (1,000-1,500 chunks/s) and
# 4,096 at half that, since CUDA runs MiniLM's attention without flash attention, over the whole
# packed batch (bench/ISSUE21.md).
_MAX_SEQS = 64  # sequences per batch; llama.cpp's limit is LLAMA_MAX_SEQ (256)
# How a sentence vector is pooled from the token vectors (llama.cpp's llama_pooling_type).
POOLINGS = {"mean": 1, "cls": 2, "last": 3}  # LLAMA_POOLING_TYPE_{MEAN,CLS,LAST}
_POOLING_NAMES = {0: "none", 1: "mean", 2: "cls", 3: "last", 4: "rank"}
# llama.cpp's llama_flash_attn_type, and how `rag doctor` names each.
FLASH_AUTO, FLASH_OFF, FLASH_ON = -1, 0, 1
FLASH_NAMES = {FLASH_AUTO: "auto", FLASH_OFF: "off", FLASH_ON: "on"}


def flash_attention(on_gpu: bool) -> int:
    """The flash-attention setting for an embedding context (a ``llama_flash_attn_type``).

    On the CPU, on: 1.6-2.5x faster here (module docstring). With layers on a GPU, llama.cpp's
    AUTO: it keeps flash attention only where the GPU backend runs it on the layer's own
    device. CUDA has no flash-attention kernel for MiniLM's head size 32, so forcing it on
    sent every layer's attention back to the CPU: 3-4x slower embedding on an H100 (268-276
    against 836-852 chunks/s), where AUTO turns it off (shared/gpu/README.md). A model whose
    head size the GPU backend does support keeps it. The vectors agree either way (cosine
    >= 0.99999), so the choice is no part of the index fingerprint."""
    return FLASH_AUTO if on_gpu else FLASH_ON


_backend_lock = threading.Lock()
_backend_ready = False


def _llama():
    """Import llama_cpp on first use, with llama.cpp's logging silenced, backend ready."""
    global _backend_ready
    from ..models.llama import load_llama_cpp

    llama_cpp = load_llama_cpp(bindings_only=True)
    with _backend_lock:
        if not _backend_ready:
            llama_cpp.llama_backend_init()
            _backend_ready = True
    return llama_cpp


class _Worker:
    """One llama.cpp context (and its batch) on the shared model; used by one thread at a time."""

    def __init__(self, lc, model, path: Path, batch_tokens: int, n_threads: int, flash_attn: int,
                 pooling: int):
        self.lc, self.path = lc, path
        self.dim = int(lc.llama_model_n_embd(model))
        self.ctx = self._new_context(model, batch_tokens, n_threads, flash_attn, pooling)
        self.batch = lc.llama_batch_init(batch_tokens, 0, _MAX_SEQS)
        view = np.ctypeslib.as_array
        self._tokens, self._pos = view(self.batch.token, (batch_tokens,)), view(self.batch.pos, (batch_tokens,))
        # Every token has one sequence id and is an output (pooling reads them all): set once.
        view(self.batch.n_seq_id, (batch_tokens,))[:] = 1
        view(ctypes.cast(self.batch.logits, ctypes.POINTER(ctypes.c_int8)), (batch_tokens,))[:] = 1

    def _new_context(self, model, batch_tokens: int, n_threads: int, flash_attn: int, pooling: int):
        lc = self.lc
        params = lc.llama_context_default_params()
        params.n_ctx = batch_tokens  # a multiple of _MAX_SEQS (llama.cpp splits it per seq)
        params.n_batch = params.n_ubatch = batch_tokens  # non-causal: one ubatch per call
        params.n_seq_max = _MAX_SEQS
        params.n_threads = params.n_threads_batch = n_threads
        params.embeddings = True
        params.pooling_type = pooling  # UNSPECIFIED: what the GGUF says (MiniLM: mean)
        params.flash_attn_type = flash_attn  # see flash_attention()
        ctx = lc.llama_init_from_model(model, params)
        if not ctx:
            raise ModelError(f"llama.cpp could not create a context for {self.path}")
        if lc.llama_pooling_type(ctx) in (lc.LLAMA_POOLING_TYPE_NONE, lc.LLAMA_POOLING_TYPE_RANK):
            lc.llama_free(ctx)
            raise ModelError(f"{self.path} is not an embedding model (it pools no sentence vector)",
                             hint="Use an embedding GGUF (e.g. a BERT-family model) for RAG_EMBED_MODEL.")
        return ctx

    def decode(self, seqs: list[list[int]]) -> np.ndarray:
        """Pooled embeddings of ``seqs`` (one sequence id each) in one llama_decode."""
        lc, batch = self.lc, self.batch
        lengths = [len(s) for s in seqs]
        n = sum(lengths)
        # Whole arrays at once: a GPU batch holds thousands of tokens, and five ctypes stores a
        # token cost more than the decode of them there.
        self._tokens[:n] = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.int32, count=n)
        self._pos[:n] = np.concatenate([np.arange(k, dtype=np.int32) for k in lengths])
        seq_ids = batch.seq_id
        n = 0
        for seq_id, k in enumerate(lengths):
            for i in range(n, n + k):
                seq_ids[i][0] = seq_id
            n += k
        batch.n_tokens = n
        memory = lc.llama_get_memory(self.ctx)
        if memory:  # causal embedding models keep a KV cache: start each batch empty
            lc.llama_memory_clear(memory, True)
        rc = lc.llama_decode(self.ctx, batch)  # ctypes releases the GIL: workers run in parallel
        if rc != 0:
            raise ModelError(f"llama.cpp failed to embed a batch (code {rc}) with {self.path}")
        vectors = np.empty((len(seqs), self.dim), dtype=np.float32)
        for seq_id in range(len(seqs)):
            ptr = lc.llama_get_embeddings_seq(self.ctx, seq_id)
            if not ptr:
                raise ModelError(f"llama.cpp returned no embedding from {self.path}")
            vectors[seq_id] = np.ctypeslib.as_array(ptr, shape=(self.dim,))
        return vectors

    def close(self) -> None:
        if self.batch is not None:
            self.lc.llama_batch_free(self.batch)
            self.batch = None
        if self.ctx:
            self.lc.llama_free(self.ctx)
            self.ctx = None


def _split_threads(n_threads: int, workers: int | None) -> tuple[int, int]:
    """(workers, threads each). Default: one single-threaded worker per core, at most 8.

    Independent single-threaded contexts beat one context with all threads: ggml's threads
    meet at a barrier after every operation, and on a busy 2-core machine a descheduled
    thread leaves the other spinning (2 threads ran 4x *slower* than 1 under load)."""
    n_threads = max(1, n_threads)
    workers = max(1, min(workers or n_threads, n_threads, 8))
    return workers, max(1, n_threads // workers)


class LlamaEmbedder:
    """A GGUF embedding model (pooled, e.g. MiniLM's mean) run through llama.cpp's C API.

    Models trained with instructions want one prefix on queries and another on documents
    (nomic-embed: ``search_query: `` / ``search_document: ``; bge: a query instruction and
    none on documents): ``embed_queries`` and ``embed_documents`` add them, ``embed`` adds
    nothing. ``pooling`` ("mean", "cls", "last"; "" = what the GGUF says) picks how token
    vectors become one vector. ``settings`` lists those that differ from the model's own
    defaults: they shape the vectors, so they are part of the index fingerprint.
    """

    def __init__(self, path: Path, model_id: str, n_threads: int, n_gpu_layers: int = 0,
                 batch_tokens: int = DEFAULT_BATCH_TOKENS, max_tokens: int | None = None,
                 flash_attn: bool | int | None = None, workers: int | None = None, pooling: str = "",
                 query_prefix: str = "", document_prefix: str = "", engine: str = "auto"):
        lc = _llama()
        self._lc = lc
        self.path = Path(path)
        self.model_id = model_id
        self.query_prefix, self.document_prefix = query_prefix, document_prefix
        if pooling and pooling not in POOLINGS:
            raise ModelError(f"unknown pooling {pooling!r} for {self.path}",
                             hint=f"Use one of: {', '.join(POOLINGS)} (or leave it empty for the model's own).")
        self._workers: list[_Worker] = []
        self._pool = None
        # -1: every layer, when llama.cpp has a GPU device to put them on.
        on_gpu = n_gpu_layers != 0 and bool(lc.llama_supports_gpu_offload())
        self.n_gpu_layers = (n_gpu_layers if n_gpu_layers >= 0 else 999) if on_gpu else 0
        # On the CPU a float BERT file runs in numpy (embed/numpy_bert.py: 1.4x here); llama.cpp
        # then only tokenises, so it loads the vocabulary alone.
        numpy_ok = engine != "llama.cpp" and not on_gpu
        self._weights, self._blas = _numpy_engine(self.path, pooling) if numpy_ok else (None, None)
        self.engine = "numpy" if self._weights else "llama.cpp"
        self._model = self._load_model(self.n_gpu_layers, vocab_only=self._weights is not None)
        self.model_pooling = self._own_pooling()
        self._vocab = lc.llama_model_get_vocab(self._model)
        # WordPiece counts add up over text joined at whitespace (the chunker relies on it)
        self.counts_add_up = int(lc.llama_vocab_type(self._vocab)) == lc.LLAMA_VOCAB_TYPE_WPM
        if self._weights:  # a vocabulary-only load knows no sizes
            self.dim, window = self._weights.word.shape[1], self._weights.position.shape[0]
        else:
            self.dim = int(lc.llama_model_n_embd(self._model))
            window = int(lc.llama_model_n_ctx_train(self._model)) or batch_tokens
        self.max_tokens = min(max_tokens or window - 2, window - 2)
        self._batch_tokens = -(-max(batch_tokens, self.max_tokens + 2) // _MAX_SEQS) * _MAX_SEQS
        # One context when the model runs on a GPU: parallel CPU contexts would only queue.
        n_workers, threads_each = _split_threads(n_threads, 1 if on_gpu else workers)
        # None: chosen for where the layers run; True/False or a FLASH_* value (benchmarks): as given.
        self.flash_attn = flash_attention(on_gpu) if flash_attn is None else int(flash_attn)
        if self._weights:
            self._workers = [NumpyWorker(self._weights) for _ in range(n_workers)]
            self.pooling = self._weights.pooling
        else:
            for _ in range(n_workers):
                self._workers.append(_Worker(lc, self._model, self.path, self._batch_tokens, threads_each,
                                             self.flash_attn, POOLINGS.get(pooling, lc.LLAMA_POOLING_TYPE_UNSPECIFIED)))
            # The pooling the contexts really use (llama.cpp resolves "unspecified" from the GGUF).
            self.pooling = _POOLING_NAMES.get(int(lc.llama_pooling_type(self._workers[0].ctx)), pooling)
        if self.model_pooling == "unspecified" and not pooling:
            self.model_pooling = self.pooling
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        for worker in self._workers:
            self._idle.put(worker)
        self._prefix, self._suffix = self._special_tokens()
        self.bos_id = self._prefix[0] if self._prefix else -1  # [CLS] for BERT models
        self.sep_id = self._suffix[0] if self._suffix else -1  # [SEP]

    # -- set-up ---------------------------------------------------------------------------
    def _load_model(self, n_gpu_layers: int, vocab_only: bool = False):
        lc = self._lc
        params = lc.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers
        params.vocab_only = vocab_only
        model = lc.llama_model_load_from_file(str(self.path).encode(), params)
        if not model:
            raise ModelError(f"llama.cpp could not load {self.path}",
                             hint="Check that it is an embedding model in GGUF format.")
        return model

    def _meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(128)
        n = self._lc.llama_model_meta_val_str(self._model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace") if n >= 0 else None

    def _own_pooling(self) -> str:
        """The pooling the GGUF asks for ("mean" for MiniLM), as a name."""
        raw = self._meta(f"{self._meta('general.architecture')}.pooling_type")
        return _POOLING_NAMES.get(int(raw), raw) if raw and raw.lstrip("-").isdigit() else "unspecified"

    @property
    def settings(self) -> dict[str, str]:
        """What shapes the vectors besides the weights, where it differs from the model's own."""
        own = {"pooling": self.model_pooling, "query_prefix": "", "document_prefix": ""}
        mine = {"pooling": self.pooling, "query_prefix": self.query_prefix, "document_prefix": self.document_prefix}
        return {k: v for k, v in mine.items() if v != own[k]}

    def _special_tokens(self) -> tuple[list[int], list[int]]:
        # What the model's tokenizer adds around a text (BERT: [CLS] ... [SEP]), added by
        # hand so truncation keeps them.
        lc, vocab = self._lc, self._vocab
        prefix = [lc.llama_vocab_bos(vocab)] if lc.llama_vocab_get_add_bos(vocab) else []
        if lc.llama_vocab_get_add_sep(vocab) and lc.llama_vocab_sep(vocab) >= 0:
            suffix = [lc.llama_vocab_sep(vocab)]
        elif lc.llama_vocab_get_add_eos(vocab):
            suffix = [lc.llama_vocab_eos(vocab)]
        else:
            suffix = []
        return [t for t in prefix if t >= 0], [t for t in suffix if t >= 0]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for worker in self._workers:
            worker.close()
        self._workers = []
        if getattr(self, "_model", None):
            self._lc.llama_model_free(self._model)
            self._model = None

    def __del__(self):
        with contextlib.suppress(Exception):  # a finaliser must not raise (at exit, modules may be gone)
            self.close()

    # -- tokens ---------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` without [CLS]/[SEP]."""
        lc = self._lc
        raw = text.encode("utf-8", errors="replace")
        buf = (lc.llama_token * (len(raw) + 8))()  # never more tokens than bytes (+ specials)
        n = lc.llama_tokenize(self._vocab, raw, len(raw), buf, len(buf), False, False)
        if n < 0:  # buffer too small after all: llama.cpp says how many it needs
            buf = (lc.llama_token * -n)()
            n = lc.llama_tokenize(self._vocab, raw, len(raw), buf, len(buf), False, False)
        return buf[:n]

    def count_tokens(self, text: str) -> int:
        return count_tokens(self._lc, self._vocab, text)

    @property
    def token_counter(self) -> VocabCounter:
        """``count_tokens`` for another process (phase one's chunking workers): picklable."""
        return VocabCounter(self.path)

    def _sequence(self, text: str) -> list[int]:
        # Truncate, never raise: the model sees its first max_tokens word pieces.
        return [*self._prefix, *self.tokenize(text)[: self.max_tokens], *self._suffix]

    # -- embedding ------------------------------------------------------------------------
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of search queries (with the model's query prefix)."""
        return self.embed([self.query_prefix + t for t in texts] if self.query_prefix else texts)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of the chunks to index (with the model's document prefix)."""
        return self.embed([self.document_prefix + t for t in texts] if self.document_prefix else texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` as they are (no prefix)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        seqs = [self._sequence(t) for t in texts]
        # Longest first: batches fill evenly and the workers finish together.
        order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
        groups = list(_pack(order, seqs, self._batch_tokens, _MAX_SEQS))
        if len(groups) == 1 or len(self._workers) == 1:
            results = [self._run(group, seqs) for group in groups]
        else:
            # numpy's workers are the threads: its BLAS must not start threads of its own
            with one_blas_thread.held(self._blas) if self._blas else contextlib.nullcontext():
                results = list(self._executor().map(lambda g: self._run(g, seqs), groups))
        for group, vectors in zip(groups, results):
            out[group] = vectors
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def _run(self, group: list[int], seqs: list[list[int]]) -> np.ndarray:
        worker = self._idle.get()  # blocks until a context is free: callers may be threads too
        try:
            return worker.decode([seqs[i] for i in group])
        finally:
            self._idle.put(worker)

    def _executor(self):
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(len(self._workers), thread_name_prefix="ragcli-embed")
        return self._pool


def _numpy_engine(path: Path, pooling: str):
    """(weights, BLAS controller) for numpy_bert, or (None, None) where llama.cpp must run it."""
    weights = load_bert(path, pooling)
    blas = blas_controller() if weights else None
    return (weights, blas) if blas else (None, None)


def _pack(order: list[int], seqs: list[list[int]], max_tokens: int, max_seqs: int):
    """Consecutive groups of ``order`` whose token counts fit one batch."""
    group: list[int] = []
    used = 0
    for i in order:
        if group and (used + len(seqs[i]) > max_tokens or len(group) == max_seqs):
            yield group
            group, used = [], 0
        group.append(i)
        used += len(seqs[i])
    if group:
        yield group
