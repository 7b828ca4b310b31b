"""llama.cpp's native library loads before any other third-party native library.

With llama-cpp-python built for CUDA (0.3.36, `-DGGML_CUDA=on`), a process that loaded
numpy's extension modules before llama.cpp's libraries crashes in ``libggml-cuda.so`` as
soon as it loads a model, even with no layer offloaded (see README, "GPU"). Importing
``llama_cpp`` first, or preloading its libraries, avoids it; the native cause is not
established. So ragcli does not depend on import order by luck: ``llama_first()``, called
once by the CLI's ``main`` (and by the test suite's conftest), makes the process load
``libllama`` (which pulls in ggml and its GPU backend) just before the first third-party
extension module, whichever it is (numpy, chromadb's Rust bindings, onnxruntime,
tokenizers, safetensors, pydantic-core...) and whichever command path imports it.

It loads the library with ctypes, exactly as ``import llama_cpp`` does (same file, same
dlopen mode), instead of importing the Python package: ``llama_cpp`` imports numpy itself,
and an import started from inside the import system's search for numpy would load numpy
twice. A command that never imports a native extension (`rag search` answered by the
watcher) never pays for the load; ``import ragcli.cli`` loads nothing.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import sys
import sysconfig
from pathlib import Path


def llama_library() -> Path | None:
    """The ``libllama`` that ``import llama_cpp`` would load, or None (not installed)."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")  # llama-cpp-python's own override
    if override:
        folder = Path(override)
    else:
        spec = importlib.machinery.PathFinder.find_spec("llama_cpp")
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(list(spec.submodule_search_locations)[0]) / "lib"
    names = {"win32": ["llama.dll", "libllama.dll"], "darwin": ["libllama.so", "libllama.dylib"]}
    for name in names.get(sys.platform, ["libllama.so"]):
        if (folder / name).is_file():
            return folder / name
    return None


class _LlamaFirst:
    """A meta-path finder in front of the path finder: it asks the path finder, as the import
    system would next, and before returning a third-party extension module's spec (the
    module is loaded right after) loads libllama, once; then it leaves."""

    def __init__(self):
        # The interpreter's own extension modules (lib-dynload) are not third-party; in a venv
        # sysconfig's "platstdlib" is the venv's lib/, above site-packages, so it cannot say.
        self._stdlib = tuple(os.path.realpath(p) for p in
                             {os.path.dirname(os.__file__), sysconfig.get_config_var("DESTSHARED")} if p)
        self._busy = False

    def find_spec(self, name, path=None, target=None):
        if self._busy:
            return None
        self._busy = True
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec is not None and self._third_party_extension(spec.origin):
                self.load_now()
        finally:
            self._busy = False
        return spec

    def _third_party_extension(self, origin: str | None) -> bool:
        if not origin or not origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            return False
        path = os.path.realpath(origin)
        return "-packages" in path or not path.startswith(self._stdlib)

    def load_now(self) -> None:
        """Load libllama (once), then stop watching."""
        with contextlib.suppress(ValueError):  # another thread's import got here first (loading twice is harmless)
            sys.meta_path.remove(self)
        lib = llama_library()
        if lib is None:
            return  # not installed: the model load reports that, with its hint
        import ctypes

        # llama_cpp's own loader (default mode on Linux and macOS); a broken build is left to
        # `import llama_cpp`, which raises it again where it is explained
        with contextlib.suppress(OSError):
            ctypes.CDLL(str(lib))


def llama_first() -> None:
    """Make llama.cpp's library the first third-party native library this process loads.

    Too late once numpy (or any other third-party extension) is loaded, and harmless then;
    a no-op when llama_cpp is imported already or this was called before."""
    if "llama_cpp" in sys.modules or any(isinstance(f, _LlamaFirst) for f in sys.meta_path):
        return
    finders = sys.meta_path
    at = finders.index(importlib.machinery.PathFinder) if importlib.machinery.PathFinder in finders else 0
    finders.insert(at, _LlamaFirst())  # builtin and frozen modules are found before, as always
