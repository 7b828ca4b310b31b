"""`rag doctor`: is everything in place? Each problem comes with its fix. Never prints.

Checks: versions (python, ragcli, llama-cpp-python, chromadb), llama.cpp's build (CPU
instruction sets, the backends built and the devices seen), the config file, each model role
(present, a whole GGUF; loaded: where its layers and attention run, and for generation that
it produces a token), the index (opens, counts, size).
"""

from __future__ import annotations

import contextlib
import platform
import sys
import time
from importlib import metadata

from ..config import Config
from ..errors import ExitCode
from .checks import FAIL, OK, WARN, Check

def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def check_versions() -> list[Check]:
    from .. import __version__

    checks = [Check("versions", "python", OK if sys.version_info >= (3, 11) else FAIL,
                    f"{platform.python_version()} ({sys.executable})",
                    "" if sys.version_info >= (3, 11) else "ragcli needs Python 3.11 or newer.",
                    int(ExitCode.UNEXPECTED)),
              Check("versions", "ragcli", OK, __version__)]
    for dist, why in (("llama-cpp-python", "runs the models"), ("chromadb", "stores the vectors")):
        v = _version(dist)
        checks.append(Check("versions", dist, OK if v else FAIL, v or "not installed",
                            "" if v else f"pip install {dist}  ({why})", int(ExitCode.UNEXPECTED)))
    return checks


def check_llama_build() -> list[Check]:
    try:
        from ..models.llama import load_llama_cpp

        llama_cpp = load_llama_cpp()
    except Exception as exc:  # noqa: BLE001 - a broken native build raises all sorts
        return [Check("llama.cpp", "build", FAIL, f"cannot import llama_cpp: {exc}",
                      "Reinstall: pip install --force-reinstall --no-cache-dir llama-cpp-python",
                      int(ExitCode.MODEL))]
    info = llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip()
    features = [f.split("=")[0].split(":")[-1].strip() for f in info.replace("|", "\n").splitlines()
                if f.strip().endswith("= 1")]
    from .placement import backend_checks

    detail = ", ".join(features) or info
    if "AMX_INT8" in features:  # see models/llama.py: the repacked weights crash the first decode
        detail += " (models load without AMX's repacked weights: llama.cpp 0.3.36 crashes with them)"
    checks = [Check("llama.cpp", "cpu features", OK, detail)]
    checks += backend_checks()
    if not any(f.startswith("AVX") or f.startswith("NEON") for f in features):
        checks.append(Check("llama.cpp", "simd", WARN, "no AVX/NEON in this build: generation will be slow",
                            "Rebuild llama-cpp-python on this machine: pip install --no-binary "
                            "llama-cpp-python --force-reinstall llama-cpp-python"))
    return checks


def check_config(config: Config) -> list[Check]:
    path = config.config_file
    detail = f"{path}" + ("" if path.exists() else " (not created; defaults in use)")
    checks = [Check("config", "config file", OK, detail),
              Check("config", "data dir", OK, str(config.data_dir)),
              Check("config", "models dir", OK, str(config.models_dir))]
    if config.llm_url:
        checks.append(_check_server("generation", "llm", config.llm_url, config.llm_api_key))
    if config.embed_url:
        checks.append(_check_server("embedding", "embed", config.embed_url, config.embed_api_key))
    return checks


def _check_server(label: str, role: str, url: str, api_key: str) -> Check:
    from urllib.parse import urlsplit

    import httpx

    parts = urlsplit(url.rstrip("/"))
    path = (parts.path or ("/v1" if role == "embed" else "")).removesuffix("/embeddings")
    try:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        status = httpx.get(parts._replace(path=path + "/models").geturl(), headers=headers, timeout=5).status_code
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        return Check("models", f"{label} server", FAIL, f"{url}: {exc}",
                     f"Start the server, fix {role}_url, or unset it (RAG_{role.upper()}_URL) to run "
                     "the model in-process.", int(ExitCode.MODEL))
    if status >= 400:
        return Check("models", f"{label} server", FAIL, f"{url}: GET /models answered {status}",
                     f"Check {role}_url (it ends in /v1) and {role}_api_key.", int(ExitCode.MODEL))
    return Check("models", f"{label} server", OK, f"{url} answers")


def _size(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e6:.1f} MB"


def check_models(config: Config, load: bool = True) -> list[Check]:
    from ..errors import ModelError, RagError
    from ..models.catalog import lookup
    from ..models.gguf import read_gguf_info
    from ..models.resolve import list_models

    checks = []
    for spec in list_models(config):
        name = f"{spec.label} model"
        path = spec.path
        if spec.remote:
            checks.append(Check("models", name, OK, f"{path} ({spec.source})"))
            continue
        if not spec.present:
            if spec.role == "embed" and not config.embed_model:
                checks.append(Check("models", name, OK, f"{path}: built on first `rag index` "
                                    "(converted from the bundled all-MiniLM-L6-v2)"))
            elif spec.role == "embed" and lookup(config.embed_model) is not None:
                checks.append(Check("models", name, FAIL, f"{path}: not downloaded",
                                    f"Download it with: rag models pull {lookup(config.embed_model).name}",
                                    int(ExitCode.MODEL)))
            else:
                checks.append(Check("models", name, FAIL, f"{path}: missing",
                                    f"Point {('embed_model' if spec.role == 'embed' else 'llm_model')} "
                                    "at a GGUF file, or unset it for the built-in model.",
                                    int(ExitCode.MODEL)))
            continue
        try:
            read_gguf_info(path)
        except ModelError as exc:
            checks.append(Check("models", name, FAIL, str(exc), exc.hint, int(ExitCode.MODEL)))
            continue
        detail = f"{path} ({_size(spec.size)}, {spec.source})"
        if load:  # it loads (the generator: and generates), and where it runs
            from .placement import embedder_placement

            try:
                detail += "; " + (embedder_placement(config, path) if spec.role == "embed"
                                  else _try_generate(config, path))
            except RagError as exc:
                checks.append(Check("models", name, FAIL, f"{path}: {exc}", exc.hint, int(ExitCode.MODEL)))
                continue
        checks.append(Check("models", name, OK, detail))
    return checks


def _try_generate(config: Config, path) -> str:
    from ..generate.llama import LlamaGenerator
    from .placement import generator_placement

    started = time.perf_counter()
    with contextlib.closing(LlamaGenerator(path, n_ctx=512, n_threads=config.n_threads,
                                           n_gpu_layers=config.n_gpu_layers)) as gen:
        result = gen.generate([{"role": "user", "content": "Say OK."}], max_tokens=2, temperature=0.0)
        where = generator_placement(config, gen)
    return (f"loads and generates ({time.perf_counter() - started:.2f}s, {result.completion_tokens} token(s)); "
            + where)


def check_index(config: Config) -> list[Check]:
    from ..errors import RagError

    try:
        from .status import index_status

        info = index_status(config)
    except RagError as exc:
        return [Check("index", "index", FAIL, str(exc), exc.hint or "Run `rag verify --repair`.",
                      int(exc.exit_code))]
    except Exception as exc:  # noqa: BLE001 - a damaged store can fail in many ways
        return [Check("index", "index", FAIL, f"cannot open the index: {type(exc).__name__}: {exc}",
                      "Run `rag verify --repair`; if that fails, `rag index --rebuild`.",
                      int(ExitCode.STORE))]
    if not info.get("exists"):
        return [Check("index", "index", WARN, f"no index yet in {config.index_dir}",
                      "Build one: rag index PATH")]
    detail = (f"{info['files']} files, {info['chunks']} chunks, {_size(info.get('index_bytes'))} "
              f"in {config.index_dir}; model {info.get('embedding_model')}")
    checks = [Check("index", "index", OK, detail)]
    if info["files"] and not info["chunks"]:
        checks.append(Check("index", "chunks", WARN, "files are indexed but hold no text",
                            "Check the notes, or run `rag index --rebuild`."))
    return checks


def diagnose(config: Config, load_models: bool = True) -> list[Check]:
    return (check_versions() + check_llama_build() + check_config(config)
            + check_models(config, load=load_models) + check_index(config))


def exit_code(checks: list[Check]) -> int:
    """0 when nothing failed, else the code of the first failure."""
    for check in checks:
        if check.status == FAIL:
            return check.exit_code or int(ExitCode.UNEXPECTED)
    return 0
