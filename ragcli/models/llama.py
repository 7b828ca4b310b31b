"""llama.cpp, imported on first use with its log silenced."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import importlib.util
import os
import sys
import threading

from ..errors import ModelError


_log_callback = None  # kept referenced: llama.cpp calls it from C
_import_lock = threading.RLock()
_captured: list[str] | None = None  # llama.cpp's log lines while ``captured_log`` runs


@contextlib.contextmanager
def captured_log():
    """llama.cpp's log lines written while the block runs (what `rag doctor` reads llama.cpp's
    own decisions from, such as whether "auto" flash attention ended on or off). Empty when
    RAG_LLAMA_LOG=1 sends the log to stderr instead."""
    global _captured
    lines: list[str] = []
    _captured = lines
    try:
        yield lines
    finally:
        _captured = None


def _on_log(level, text, user_data) -> None:
    if _captured is not None and text:
        _captured.append(text.decode("utf-8", "replace"))


def load_llama_cpp(bindings_only: bool = False):
    """``import llama_cpp`` with llama.cpp's log routed to nothing (RAG_LLAMA_LOG=1 keeps it).

    llama-cpp-python's ``verbose=False`` is not enough with llama.cpp 0.3.36: its level map
    predates ggml's renumbered log levels, so warnings still reach stderr.

    ``bindings_only``: its C API alone (``llama_cpp.llama_cpp``), all the embedder uses. The
    package's ``__init__`` also imports the high-level ``Llama`` with its chat formats and
    jinja2: 0.2 s of a cold `rag search` on a busy 2-core machine, which only embeds its
    query. A later full load runs that ``__init__`` then.
    """
    global _log_callback
    # OpenMP's default busy-wait collapses llama.cpp on a busy 2-core machine (measured: 2.5 vs
    # 28 tokens/s generating, and indexing several times slower); it is read once, at load.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # llama.cpp 0.3.36's CUDA graphs die with "illegal instruction" at the second graph launch
    # of a batch of documents (H200, 2026-11-28): off until a build is shown to run them.
    os.environ.setdefault("GGML_CUDA_DISABLE_GRAPHS", "1")
    try:
        with _import_lock:
            llama_cpp = _bindings() if bindings_only else _package()
    except ImportError as exc:
        raise ModelError(f"llama-cpp-python cannot be imported: {exc}",
                         hint="Install it: pip install llama-cpp-python") from None
    if _log_callback is None and not os.environ.get("RAG_LLAMA_LOG"):
        _log_callback = llama_cpp.llama_log_callback(_on_log)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
    _without_amx_repack(llama_cpp)
    return llama_cpp


def _without_amx_repack(llama_cpp) -> None:
    """On a CPU with AMX, load models without llama.cpp's extra (repacked) weight buffers.

    llama.cpp 0.3.36 built natively on a Xeon with AMX repacks the weights into its AMX buffer
    and dies with a segfault in the first decode (SmolLM2's Q4_1 on this project's machines,
    2026-12-05; ggml-org/llama.cpp#20824 for Q4_K_M). Without the extra buffers the same
    build runs the model on its AVX-512 kernels. Both the ``Llama`` class and the embedder take
    their parameters from ``llama_model_default_params``, so that is where it is turned off."""
    bindings = sys.modules.get("llama_cpp.llama_cpp")
    default = getattr(bindings, "llama_model_default_params", None)
    if default is None or getattr(default, "_ragcli_no_amx", False):
        return
    if b"AMX_INT8 = 1" not in (llama_cpp.llama_print_system_info() or b""):
        return

    def without_extra_buffers():
        params = default()
        params.use_extra_bufts = False
        return params

    without_extra_buffers._ragcli_no_amx = True
    bindings.llama_model_default_params = without_extra_buffers


_partial = None  # the llama_cpp package, registered without running its __init__ yet


def _bindings():
    global _partial
    if "llama_cpp" not in sys.modules:
        spec = importlib.util.find_spec("llama_cpp")
        if spec is None:
            raise ImportError("No module named 'llama_cpp'")
        _partial = sys.modules["llama_cpp"] = importlib.util.module_from_spec(spec)
        _partial.__getattr__ = _finish  # anyone reaching for the rest (llama_cpp.Llama) gets it
    return importlib.import_module("llama_cpp.llama_cpp")


def _finish(name: str):
    with _import_lock:
        package = _package()
    return getattr(package, name)


def _package():
    global _partial
    if _partial is not None:
        package, _partial = _partial, None
        del package.__getattr__
        package.__spec__.loader.exec_module(package)  # its submodules already loaded are reused
        if _log_callback is not None:  # its __init__ (llama_cpp._logger) set a callback of its own
            package.llama_log_set(_log_callback, ctypes.c_void_p(0))
    import llama_cpp

    return llama_cpp
