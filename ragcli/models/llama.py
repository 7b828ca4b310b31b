"""llama.cpp, imported on first use with its log silenced."""

from __future__ import annotations

import contextlib
import ctypes
import os

from ..errors import ModelError


_log_callback = None  # kept referenced: llama.cpp calls it from C
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
        _log_callback = llama_cpp.llama_log_callback(_on_log)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
    return llama_cpp

