"""What llama.cpp was built with and which devices it sees, from ggml's backend registry.

``llama_supports_gpu_offload()`` alone cannot tell a CPU-only build from a CUDA build on a
machine whose GPU is hidden (both say False); the registry can: a CUDA build registers a
"CUDA" backend whatever the devices, and lists one device per visible GPU. llama-cpp-python
does not bind these ggml functions, so they are called through ctypes on the ggml library
that llama.cpp itself loaded.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path

# ggml's enum ggml_backend_dev_type
_DEVICE_KINDS = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel", 4: "meta"}
# Registered backends that are not a place to offload layers to.
_NOT_ACCELERATORS = {"CPU", "BLAS", "RPC"}


@dataclass(frozen=True)
class Device:
    name: str  # "CPU", "CUDA0", "Metal"
    description: str  # "NVIDIA H100 80GB HBM3", the CPU's model name
    kind: str  # cpu | gpu | igpu | accel
    memory_total: int  # bytes (0 when the backend does not say)

    def label(self) -> str:
        memory = f", {self.memory_total / 2**30:.0f} GiB" if self.memory_total and self.kind != "cpu" else ""
        return f"{self.name} ({self.description}{memory})"


@dataclass(frozen=True)
class Backends:
    built: list[str]  # registered ggml backends: ["CPU"], ["CUDA", "CPU"], ["Metal", "BLAS", "CPU"]
    devices: list[Device] = field(default_factory=list)
    gpu_offload: bool = False  # llama_supports_gpu_offload(): a GPU device is there to use

    @property
    def accelerators(self) -> list[str]:
        """The GPU backends compiled in (CUDA, Metal, Vulkan, HIP, SYCL...), seen or not."""
        return [b for b in self.built if b not in _NOT_ACCELERATORS]

    @property
    def gpus(self) -> list[Device]:
        return [d for d in self.devices if d.kind in ("gpu", "igpu", "accel")]

    def placement(self, n_gpu_layers: int) -> str:
        """Where a model loaded with ``n_gpu_layers`` runs its layers: "cpu", or the GPU
        device names and the layer count ("CUDA0:all"). Part of the generator's KV-cache key:
        a state evaluated on one backend is not restored on another."""
        if n_gpu_layers == 0 or not self.gpu_offload or not self.gpus:
            return "cpu"
        layers = "all" if n_gpu_layers < 0 or n_gpu_layers >= 999 else str(n_gpu_layers)
        return "+".join(d.name for d in self.gpus) + f":{layers}"


def _ggml(llama_cpp) -> ctypes.CDLL | None:
    """The ggml library next to libllama (already loaded by it; dlopen returns the same one)."""
    folder = Path(llama_cpp.__file__).parent / "lib"
    for name in ("libggml.so", "libggml.dylib", "ggml.dll", "libggml.dll"):
        if (folder / name).is_file():
            try:
                lib = ctypes.CDLL(str(folder / name))
            except OSError:
                return None
            break
    else:
        return None
    ptr = ctypes.c_void_p
    signatures = {
        "ggml_backend_reg_count": ([], ctypes.c_size_t),
        "ggml_backend_reg_get": ([ctypes.c_size_t], ptr),
        "ggml_backend_reg_name": ([ptr], ctypes.c_char_p),
        "ggml_backend_dev_count": ([], ctypes.c_size_t),
        "ggml_backend_dev_get": ([ctypes.c_size_t], ptr),
        "ggml_backend_dev_name": ([ptr], ctypes.c_char_p),
        "ggml_backend_dev_description": ([ptr], ctypes.c_char_p),
        "ggml_backend_dev_type": ([ptr], ctypes.c_int),
        "ggml_backend_dev_memory": ([ptr, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)], None),
    }
    try:
        for name, (args, result) in signatures.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, result
    except AttributeError:  # an older ggml without the registry
        return None
    return lib


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode("utf-8", "replace").strip()


def describe_backends() -> Backends:
    """The backends llama.cpp was built with and the devices they see (llama_cpp imported)."""
    from .llama import load_llama_cpp

    llama_cpp = load_llama_cpp()
    llama_cpp.llama_backend_init()  # idempotent; registers the backends of a dynamic build
    gpu_offload = bool(llama_cpp.llama_supports_gpu_offload())
    lib = _ggml(llama_cpp)
    if lib is None:  # fall back on the system-info line, which names each registered backend
        info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
        built = [part.split(":")[0].strip() for part in info.split("|") if ":" in part]
        return Backends(built=list(dict.fromkeys(b for b in built if b)), gpu_offload=gpu_offload)
    built = [_text(lib.ggml_backend_reg_name(lib.ggml_backend_reg_get(i)))
             for i in range(lib.ggml_backend_reg_count())]
    devices = []
    for i in range(lib.ggml_backend_dev_count()):
        dev = lib.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        devices.append(Device(_text(lib.ggml_backend_dev_name(dev)), _text(lib.ggml_backend_dev_description(dev)),
                              _DEVICE_KINDS.get(lib.ggml_backend_dev_type(dev), "other"), int(total.value)))
    return Backends(built=built, devices=devices, gpu_offload=gpu_offload)
