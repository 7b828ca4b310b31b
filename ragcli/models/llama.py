"""llama.cpp, imported on first use with its log silenced."""

from __future__ import annotations

import ctypes
import os

from ..errors import ModelError


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

