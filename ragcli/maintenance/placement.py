"""For `rag doctor`: which backend llama.cpp was built with, which devices it sees, and where
each model's layers and attention run. Never prints.

Told apart on purpose: a CPU-only build (rebuild for a GPU), a GPU build that sees no GPU
(a driver or CUDA_VISIBLE_DEVICES matter, not a rebuild), and a GPU build that offloads.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from ..config import Config
from ..models.backend import Backends, describe_backends
from .checks import OK, WARN, Check

REBUILD = ('CMAKE_ARGS="-DGGML_CUDA=on" pip install --force-reinstall --no-cache-dir '
           'llama-cpp-python  (or -DGGML_METAL=on on a Mac)')


def backend_checks(backends: Backends | None = None) -> list[Check]:
    """The "backend" and "devices" checks of llama.cpp's build (this process's, by default)."""
    backends = backends or describe_backends()
    built = ", ".join(backends.built) or "unknown"
    devices = Check("llama.cpp", "devices", OK, "; ".join(d.label() for d in backends.devices) or "none listed")
    accelerators = ", ".join(backends.accelerators)
    if not accelerators:
        return [Check("llama.cpp", "backend", OK, f"CPU only (built: {built}): models run on the CPU; "
                      f"for a GPU, rebuild: {REBUILD}"), devices]
    if not backends.gpus or not backends.gpu_offload:
        return [Check("llama.cpp", "backend", WARN,
                      f"built with {accelerators} (built: {built}), but llama.cpp sees no GPU: "
                      "models run on the CPU",
                      "Check the GPU driver (nvidia-smi for CUDA) and CUDA_VISIBLE_DEVICES; "
                      "no rebuild is needed."), devices]
    # load_llama_cpp sets GGML_CUDA_DISABLE_GRAPHS before any model loads, and llama.cpp reads any
    # value as off: no process of ragcli's runs them (README, "GPU")
    graphs = "; CUDA graphs off" if "CUDA" in backends.accelerators else ""
    return [Check("llama.cpp", "backend", OK, f"{accelerators} (built: {built}); n_gpu_layers=-1 "
                  f"(the default) puts every layer of both models on the GPU{graphs}"), devices]


def _flash_outcome(choice: int, log: str) -> str:
    """"on", "off", or for llama.cpp's auto setting what it resolved to, read from its log."""
    from ..embed.llama import FLASH_AUTO, FLASH_NAMES

    if choice != FLASH_AUTO:
        return FLASH_NAMES.get(choice, str(choice))
    if re.search(r"Flash Attention not supported", log):
        why = re.search(r"(layer \d+ is assigned to device \S+ but Flash Attention is assigned to device \S+)", log)
        return "auto: off" + (f" ({why.group(1)})" if why else "")
    if re.search(r"Flash Attention enabled", log):
        return "auto: on"
    return "auto"


def embedder_placement(config: Config, path: Path) -> str:
    """Load the embedding model as indexing does; say where its layers and attention run."""
    from ..embed.llama import LlamaEmbedder
    from ..models.llama import captured_log

    with captured_log() as lines:
        embedder = LlamaEmbedder(path, model_id="doctor", n_threads=config.n_threads,
                                 n_gpu_layers=config.n_gpu_layers, workers=1)
    with contextlib.closing(embedder):
        if embedder.engine == "numpy":  # llama.cpp only tokenises (embed/numpy_bert.py)
            return f"layers on cpu in numpy, llama.cpp tokenises (n_gpu_layers={config.n_gpu_layers})"
        where = describe_backends().placement(embedder.n_gpu_layers)
        flash = _flash_outcome(embedder.flash_attn, "".join(lines))
    return f"layers on {where}, flash attention {flash} (n_gpu_layers={config.n_gpu_layers})"


def generator_placement(config: Config, gen) -> str:
    """Where a loaded LlamaGenerator runs (the generator forces flash attention on)."""
    return f"layers on {gen.placement}, flash attention on (n_gpu_layers={config.n_gpu_layers})"
