"""One frozen Config, resolved once: flag > RAG_* environment variable > config.toml > default.

All state lives under one home: ``RAG_HOME`` when set (tests use a temp dir), otherwise the
XDG folders (config in $XDG_CONFIG_HOME/ragcli, index in $XDG_DATA_HOME/ragcli, models in
$XDG_CACHE_HOME/ragcli/models).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class Config:
    # where things live (derived from RAG_HOME / XDG unless set)
    config_file: Path
    data_dir: Path
    models_dir: Path
    # models: "" means the built-in default, else a path to a GGUF file
    embed_model: str = ""
    llm_model: str = ""
    # how the embedding model is used (right for MiniLM by default: no prefixes, its own mean
    # pooling); instruction-tuned models want prefixes, e.g. nomic-embed "search_query: "
    # None = not set: the catalogue's for a model it knows (embed.embedding_usage), else none
    embed_query_prefix: str | None = None
    embed_document_prefix: str | None = None
    embed_pooling: str | None = None  # "" = what the GGUF says, or mean / cls / last
    # remote seams: OpenAI-compatible servers for generation and embeddings, a Chroma server
    # for vectors. With a url set, llm_model / embed_model name the server's model (or "").
    llm_url: str = ""
    llm_api_key: str = ""
    embed_url: str = ""
    embed_api_key: str = ""
    embed_max_tokens: int = 256  # the most tokens the server's embedding model reads per text
    chroma_url: str = ""
    # chunking (sized for all-MiniLM-L6-v2, trained on 256 word pieces)
    chunk_tokens: int = 200
    chunk_overlap: int = 32
    # retrieval
    mode: str = "hybrid"
    top_k: int = 5
    min_score: float = -1.0  # relevance threshold for `ask`; < 0 means the calibrated default
    # generation
    temperature: float = 0.1
    max_tokens: int = 256
    n_ctx: int = 2048
    threads: int = 0  # 0: all cores
    # models: layers of the embedder *and* the generator put on the GPU
    n_gpu_layers: int = -1  # -1: all layers when llama.cpp has a GPU backend, else none
    # phase two of `rag index` embedding beside phase one: auto (when the embedder is on a GPU), on, off
    index_overlap: str = "auto"
    # parsing limits
    parse_timeout: float = 30.0
    parse_memory_mb: int = 1024
    max_file_mb: int = 50
    # watcher
    debounce: float = 1.0
    reconcile_interval: float = 300.0
    # the idle watcher embeds evidence passages ahead of questions: on, off, or auto (on unless
    # the embedder is a server: ~10k requests a vault may be metered there)
    watch_prefill: str = "auto"
    daemon: str = "auto"  # search/ask/status through a running watcher: auto, off or require

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def n_threads(self) -> int:
        return self.threads if self.threads > 0 else (os.cpu_count() or 1)

    def as_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(self).items()}


_PATH_KEYS = {"config_file", "data_dir", "models_dir"}
POOLINGS = ("", "mean", "cls", "last")
MODES = ("hybrid", "vector", "keyword")  # the search modes, for every door (CLI, socket, MCP)
DAEMON = ("auto", "off", "require")
OVERLAP = ("auto", "on", "off")
ON_OFF = ("on", "off")
# Settings whose command-line flag is spelled otherwise than --<setting>: a bad value is
# reported under the flag the user typed (commands/options.py).
FLAGS = {"llm_model": "--model", "n_ctx": "--ctx", "n_gpu_layers": "--gpu-layers", "top_k": "--top-k",
         "watch_prefill": "--no-prefill"}
# The least each number may be. Below it a run failed later and less clearly: `-k 0` printed "No
# results.", `--ctx 64` crashed in llama.cpp's first decode and `--ctx -5` blamed the model file.
MINIMUM: dict[str, float] = {
    "top_k": 1, "n_ctx": 128, "max_tokens": 1, "temperature": 0.0, "threads": 0, "n_gpu_layers": -1,
    "chunk_tokens": 32, "chunk_overlap": 0, "embed_max_tokens": 16, "parse_timeout": 0.1,
    "parse_memory_mb": 64, "max_file_mb": 1, "debounce": 0.0, "reconcile_interval": 1.0}
# Settings a user may set in config.toml or RAG_<NAME>; everything but the derived paths
# config_file, and the paths themselves are allowed too (data_dir, models_dir).
SETTABLE = tuple(f.name for f in fields(Config) if f.name != "config_file")


def _default_paths(env: dict[str, str]) -> dict[str, Path]:
    home = env.get("RAG_HOME")
    if home:
        root = Path(home).expanduser()
        return {"config_file": root / "config.toml", "data_dir": root, "models_dir": root / "models"}
    user_home = Path(env.get("HOME") or Path.home())
    _refuse_real_home_under_pytest(env)
    xdg_config = Path(env.get("XDG_CONFIG_HOME") or user_home / ".config")
    xdg_data = Path(env.get("XDG_DATA_HOME") or user_home / ".local" / "share")
    xdg_cache = Path(env.get("XDG_CACHE_HOME") or user_home / ".cache")
    return {
        "config_file": xdg_config / "ragcli" / "config.toml",
        "data_dir": xdg_data / "ragcli",
        "models_dir": xdg_cache / "ragcli" / "models",
    }


def _refuse_real_home_under_pytest(env: dict[str, str]) -> None:
    # Tests must never write into the developer's real home: they set RAG_HOME.
    if "pytest" in sys.modules and not env.get("RAG_ALLOW_REAL_HOME"):
        raise ConfigError("refusing to use the real home directory under pytest: set RAG_HOME")


def _coerce(name: str, value: Any, source: str) -> Any:
    field_type = {f.name: f.type for f in fields(Config)}[name]
    try:
        if name in _PATH_KEYS:
            return Path(str(value)).expanduser()
        if field_type == "int":
            return int(value)
        if field_type == "float":
            return float(value)
        return str(value)  # "str" and "str | None" (None = unset) alike
    except (TypeError, ValueError):
        raise ConfigError(f"{source} must be {field_type}, got {value!r}") from None


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    import tomllib  # here: most runs have no config file, and a one-off search saves ~0.01 s

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    unknown = sorted(set(data) - set(SETTABLE))
    if unknown:
        raise ConfigError(f"{path}: unknown setting(s): {', '.join(unknown)}",
                          hint=f"Known settings: {', '.join(SETTABLE)}")
    return data


def load_config(overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Config:
    """Resolve the configuration: flag (overrides) > RAG_* env > config.toml > default."""
    env = dict(os.environ if env is None else env)
    values: dict[str, Any] = dict(_default_paths(env))
    config_file = Path(env["RAG_CONFIG"]).expanduser() if env.get("RAG_CONFIG") else values["config_file"]
    values["config_file"] = config_file
    given = [(key, raw, f"{config_file}: {key}") for key, raw in _read_toml(config_file).items()]
    given += [(key, env[f"RAG_{key.upper()}"], f"RAG_{key.upper()}") for key in SETTABLE
              if env.get(f"RAG_{key.upper()}")]
    given += [(key, raw, FLAGS.get(key, f"--{key.replace('_', '-')}"))
              for key, raw in (overrides or {}).items() if raw is not None]
    source: dict[str, str] = {}  # setting -> where its value came from, as the user wrote it
    for key, raw, where in given:  # in rising precedence: the last one wins
        values[key], source[key] = _coerce(key, raw, where), where
    for key, allowed, default in (("mode", MODES, "hybrid"), ("daemon", DAEMON, "auto"),
                                  ("index_overlap", OVERLAP, "auto"), ("embed_pooling", POOLINGS, ""),
                                  ("watch_prefill", ("auto",) + ON_OFF, "auto")):
        if values.get(key, default) not in allowed:
            empty = " (or empty: the model's own)" if "" in allowed else ""
            raise ConfigError(f"{source[key]} must be one of {', '.join(filter(None, allowed))}{empty}, "
                              f"got {values[key]!r}")
    _check_ranges(values, source)
    return Config(**values)


def _check_ranges(values: dict[str, Any], source: dict[str, str]) -> None:
    for key, least in MINIMUM.items():
        if key in source and values[key] < least:
            raise ConfigError(f"{source[key]} must be at least {least:g}, got {values[key]:g}")
    if "chunk_overlap" in source or "chunk_tokens" in source:
        default = {f.name: f.default for f in fields(Config)}
        tokens = values.get("chunk_tokens", default["chunk_tokens"])
        overlap = values.get("chunk_overlap", default["chunk_overlap"])
        if overlap >= tokens:
            where = source.get("chunk_overlap") or source["chunk_tokens"]
            raise ConfigError(f"{where}: chunk_overlap ({overlap}) must be less than chunk_tokens ({tokens})")


def ensure_private_dir(path: Path) -> Path:
    """Create a folder readable only by its owner (the index holds the user's notes)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        path.chmod(0o700)
    return path


def write_private(path: Path, data: str | bytes) -> None:
    """Replace ``path`` atomically with ``data``, readable by its owner only."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data.encode() if isinstance(data, str) else data)
    finally:
        os.close(fd)
    os.replace(tmp, path)
