"""Shared fixtures: every test runs against its own RAG_HOME in a temp dir.

The converted embedding model is cached once per test session (RAG_MODELS_DIR) so that
only the first test pays for the conversion.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# llama.cpp's OpenMP threads spin while waiting; on a shared 2-core machine that makes the
# model-heavy fixtures several times slower (see ragcli/models/llama.py). Set before any import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Tests run commands in this process: llama.cpp's library must load before numpy's here too,
# or a CUDA build of llama.cpp crashes (ragcli/native.py).
from ragcli.native import llama_first

llama_first()

import pytest  # noqa: E402

# Paths as reached, never resolved: ../shared is often a symlink, and the index stores (and
# results cite) the path it was given, so tests compare against the spelling they passed in.
ROOT = Path(os.path.abspath(__file__)).parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"
VAULT = CORPORA / "obsidian-help" / "en"
PDFS = CORPORA / "pdfs"
SCIFACT = CORPORA / "scifact"
EXAMPLES = ROOT / "examples"

needs_corpora = pytest.mark.skipif(not VAULT.is_dir(), reason="../shared/corpora is not present")


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("models")
    # A machine without the embedding model's package (a lent GPU, bench/gpu) brings the
    # converted GGUF instead: RAG_TEST_MODELS_FROM names the folder it is in.
    seed = os.environ.get("RAG_TEST_MODELS_FROM")
    for model in Path(seed).glob("all-MiniLM*.gguf") if seed else ():
        shutil.copy(model, folder / model.name)
    return folder


@pytest.fixture(autouse=True)
def rag_home(tmp_path, models_dir, monkeypatch) -> Path:
    home = tmp_path / "raghome"
    home.mkdir()
    monkeypatch.setenv("RAG_HOME", str(home))
    monkeypatch.setenv("RAG_MODELS_DIR", str(models_dir))
    for name in list(os.environ):
        if name.startswith("RAG_") and name not in ("RAG_HOME", "RAG_MODELS_DIR"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    from ragcli import render

    render.reset_consoles()
    return home


@pytest.fixture(scope="session")
def help_vault_env(tmp_path_factory, models_dir) -> dict[str, str]:
    """An index of the Obsidian help vault, built once per session: the env that points at it."""
    if not VAULT.is_dir():
        pytest.skip("../shared/corpora is not present")
    from ragcli.config import load_config
    from ragcli.pipeline import index

    home = tmp_path_factory.mktemp("help-vault-home")
    env = {"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models_dir)}
    report = index(load_config(env=env), [VAULT])
    assert report.files_indexed > 100
    return env


@pytest.fixture(scope="session")
def example_vault_env(tmp_path_factory, models_dir) -> dict[str, str]:
    """An index of examples/vault, built once per session: the env that points at it."""
    from ragcli.config import load_config
    from ragcli.pipeline import index

    home = tmp_path_factory.mktemp("example-vault-home")
    env = {"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models_dir)}
    index(load_config(env=env), [EXAMPLES / "vault"])
    return env


@pytest.fixture
def searcher(example_vault_env, monkeypatch):
    """A Searcher over examples/vault (test_retrieve's module has its own, over its vault)."""
    from ragcli.config import load_config
    from ragcli.retrieve import Searcher

    for key, value in example_vault_env.items():
        monkeypatch.setenv(key, value)
    searcher = Searcher(load_config())
    yield searcher
    searcher.close()
