"""A BERT encoder's forward pass in numpy: the built-in MiniLM's CPU engine.

Why not llama.cpp on the CPU: measured on the 2-core box (bench/bench_embed_variants.py,
bench/ISSUE23.md session 18), the same F32 weights embed 1.4x the chunks per second here.
The time goes to the matrix products, and numpy hands those to OpenBLAS, whose single-threaded
SGEMM runs near the core's peak on these shapes, where llama.cpp's does not. The vectors are
the same to a cosine of 1.000000: the same weights, the same tanh GELU as ggml's, the same
mean (or CLS) pooling over every token, [CLS] and [SEP] included. So the choice of engine is
no part of the index fingerprint, and an index built by either is read by the other.

Each worker is one single-threaded forward pass (OpenBLAS limited to one thread while the
workers run, through threadpoolctl): two threads on two cores, none waiting at a barrier for a
partner the scheduler took away, as with llama.cpp's contexts (embed/llama.py).

Only what this pass computes is taken: architecture ``bert``, non-causal, mean or CLS pooling,
F32 or F16 tensors. Anything else (a quantised file, nomic-bert, a GPU) stays on llama.cpp.
"""

from __future__ import annotations

import mmap
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..models.gguf import read_gguf_info

_FLOAT_TYPES = {0: np.float32, 1: np.float16}  # ggml F32, F16
_POOLINGS = {1: "mean", 2: "cls"}  # llama_pooling_type values this pass computes
_LAYER = ("attn_q", "attn_k", "attn_v", "attn_output", "attn_output_norm", "ffn_up", "ffn_down",
          "layer_output_norm")


@dataclass(frozen=True)
class BertWeights:
    """Everything the forward pass reads, as float32 arrays laid out for it."""

    word: np.ndarray  # (vocab, dim)
    position: np.ndarray  # (positions, dim), token type 0 already added
    norm: tuple[np.ndarray, np.ndarray]
    layers: tuple[dict, ...]
    heads: int
    eps: float
    pooling: str


def load_bert(path: Path, pooling: str = "") -> BertWeights | None:
    """The weights of a float BERT GGUF for this pass, or None when llama.cpp should run it."""
    info = read_gguf_info(path)
    meta = info.metadata
    if meta.get("general.architecture") != "bert" or meta.get("bert.attention.causal", False):
        return None
    pooling = pooling or _POOLINGS.get(meta.get("bert.pooling_type", 1), "")
    if pooling not in ("mean", "cls"):
        return None
    n_layers = meta.get("bert.block_count")
    names = ["token_embd.weight", "position_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias"]
    names += [f"blk.{i}.{part}.{kind}" for i in range(n_layers or 0) for part in _LAYER for kind in ("weight", "bias")]
    if not n_layers or any(info.tensors.get(n, (-1,))[0] not in _FLOAT_TYPES for n in names):
        return None
    # Mapped, not read: F32 tensors stay views of the page cache (the map lives as long as they do).
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)

    def tensor(name: str) -> np.ndarray:
        ggml_type, dims, offset = info.tensors[name]
        raw = np.frombuffer(mapped, dtype=_FLOAT_TYPES[ggml_type], count=int(np.prod(dims)), offset=offset)
        return raw.reshape(dims[::-1]).astype(np.float32, copy=False)

    types = tensor("token_types.weight")[0] if "token_types.weight" in info.tensors else 0.0
    return BertWeights(word=tensor("token_embd.weight"), position=tensor("position_embd.weight") + types,
                       norm=(tensor("token_embd_norm.weight"), tensor("token_embd_norm.bias")),
                       layers=tuple(_layer(tensor, f"blk.{i}.") for i in range(n_layers)),
                       heads=int(meta["bert.attention.head_count"]),
                       eps=float(meta.get("bert.attention.layer_norm_epsilon", 1e-12)), pooling=pooling)


def _layer(tensor, prefix: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {part: (tensor(f"{prefix}{part}.weight"), tensor(f"{prefix}{part}.bias")) for part in _LAYER}


def _dense(x: np.ndarray, pair: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    # GGUF keeps (out, in); BLAS reads the transposed view as fast as a copy, and Q, K, V as
    # three products as fast as one on their joined matrix: nothing is copied at load.
    weight, bias = pair
    out = x @ weight.T
    out += bias
    return out


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    x -= x.mean(-1, keepdims=True)
    x *= 1.0 / np.sqrt(np.einsum("ij,ij->i", x, x)[:, None] / x.shape[-1] + eps)
    x *= weight
    x += bias
    return x


def _gelu(h: np.ndarray) -> np.ndarray:
    # The tanh form, as ggml computes GELU for BERT (the exact erf form differs by ~1e-4).
    t = h * h
    t *= h
    t *= np.float32(0.044715)
    t += h
    t *= np.float32(0.7978845608028654)  # sqrt(2 / pi)
    np.tanh(t, out=t)
    t += 1.0
    t *= h
    t *= np.float32(0.5)
    return t


def forward(w: BertWeights, seqs: list[list[int]]) -> np.ndarray:
    """Pooled, unnormalised vectors of token-id sequences ([CLS]/[SEP] included), padded to
    the longest: callers group sequences of like length (embed/llama.py sorts them)."""
    n, length = len(seqs), max(len(s) for s in seqs)
    ids = np.zeros((n, length), dtype=np.int64)
    mask = np.zeros((n, length), dtype=bool)
    for i, seq in enumerate(seqs):
        ids[i, :len(seq)], mask[i, :len(seq)] = seq, True
    x = (w.word[ids] + w.position[:length]).reshape(n * length, -1)
    x = _layer_norm(x, *w.norm, w.eps)
    dim = x.shape[1]
    heads, size = w.heads, dim // w.heads
    # Padding is never attended to: -1e30 before the softmax is 0 after it.
    padding = np.where(mask, 0.0, -1e30).astype(np.float32)[:, None, None, :]
    scale = np.float32(1.0 / np.sqrt(size))
    for layer in w.layers:
        q, k, v = (_dense(x, layer[m]).reshape(n, length, heads, size).transpose(0, 2, 1, 3)
                   for m in ("attn_q", "attn_k", "attn_v"))
        scores = np.matmul(q, k.transpose(0, 1, 3, 2))
        scores *= scale
        scores += padding
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        context = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(n * length, dim)
        x = _layer_norm(_dense(context, layer["attn_output"]) + x, *layer["attn_output_norm"], w.eps)
        hidden = _gelu(_dense(x, layer["ffn_up"]))
        x = _layer_norm(_dense(hidden, layer["ffn_down"]) + x, *layer["layer_output_norm"], w.eps)
    x = x.reshape(n, length, dim)
    if w.pooling == "cls":
        return x[:, 0].copy()
    return (x * mask[:, :, None]).sum(1) / mask.sum(1)[:, None]


class _OneBlasThread:
    """BLAS at one thread while any embedding runs in numpy: the first caller in sets it, the
    last one out gives the setting back. Two embeds at once (the watcher's and its prefill's, or
    two callers of the library) would otherwise each restore what the other set, and could leave
    the process's BLAS at one thread for good."""

    def __init__(self):
        self._lock = threading.Lock()
        self._users = 0
        self._limiter = None

    @contextmanager
    def held(self, controller):
        with self._lock:
            if self._users == 0:
                self._limiter = controller.limit(limits=1)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._limiter.restore_original_limits()
                    self._limiter = None


one_blas_thread = _OneBlasThread()


def blas_controller():
    """threadpoolctl's handle on the BLAS numpy uses, or None where it has none it can limit
    (Apple's Accelerate): the caller then keeps llama.cpp, whose threads it controls."""
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController().select(user_api="blas")
    return controller if controller.lib_controllers else None


class NumpyWorker:
    """One forward pass at a time; the same ``decode`` as embed/llama.py's llama.cpp worker."""

    def __init__(self, weights: BertWeights):
        self.weights = weights

    def decode(self, seqs: list[list[int]]) -> np.ndarray:
        return forward(self.weights, seqs)

    def close(self) -> None:
        pass
