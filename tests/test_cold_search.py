"""A one-off search (a new process, no watcher) loads only what the query needs: the vector
side comes from the manifest's vector cache (``store.flat``), never from an imported Chroma,
with the same results Chroma gives; a model file checked once is not hashed or parsed again
until it changes, and a changed file is checked again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.errors import ModelError
from ragcli.store import Index

from helpers import rag_env


def test_flat_search_gives_what_chroma_gives(example_vault_env):
    config = load_config(env=example_vault_env)
    from ragcli.embed import make_embedder

    embedder = make_embedder(config)
    reader = Index.open_reader(config)
    try:
        flat = reader.flat_vectors()
        assert flat is not None and len(flat.ids) == reader.counts()[1]
        paths = sorted(reader.paths())[:3]
        for query in ("how do I back up my notes", "tags and links", "a recipe"):
            qvec = embedder.embed_queries([query])[0]
            for within in (None, paths):
                exact = flat.query(qvec, 8, within)
                chroma = reader.vectors.store().query(qvec, 8, within)
                assert [cid for cid, _ in exact] == [cid for cid, _ in chroma]
                assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(exact, chroma))
    finally:
        reader.close()
        embedder.close()


def test_a_one_off_search_never_imports_chromadb_nor_the_generation_side_of_llama_cpp(example_vault_env):
    # the query's vector needs llama.cpp's C API only, not the high-level Llama, its chat
    # formats and jinja2 (models/llama.py, bindings_only)
    code = ("import sys\nfrom ragcli.cli import main\n"
            "try:\n    main(['search', 'backups', '--json'])\nexcept SystemExit:\n    pass\n"
            "print('HEAVY', [m for m in ('chromadb', 'llama_cpp.llama', 'jinja2') if m in sys.modules],"
            " file=sys.stderr)")
    env = rag_env(env={**example_vault_env, "RAG_DAEMON": "off"})
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]
    assert "HEAVY []" in proc.stderr


def test_a_model_file_is_checked_again_once_it_changes(tmp_path, models_dir):
    from ragcli.embed import make_embedder
    from ragcli.models.convert import builtin_embed_path
    from ragcli.models.known import CACHE_NAME

    config = load_config()
    make_embedder(config).close()  # the built-in model, converted once for the session
    copy = tmp_path / "minilm.gguf"
    shutil.copyfile(builtin_embed_path(config), copy)
    mine = load_config({"embed_model": str(copy)})
    first = make_embedder(mine)
    model_id = first.model_id
    first.close()
    remembered = json.loads((Path(mine.models_dir) / CACHE_NAME).read_text())
    assert str(copy.resolve()) in remembered
    again = make_embedder(mine)  # from the remembered digest: the same id
    assert again.model_id == model_id
    again.close()
    with copy.open("r+b") as handle:  # cut short: size and mtime change, so it is checked again
        handle.truncate(copy.stat().st_size // 2)
    with pytest.raises(ModelError, match="truncated"):
        make_embedder(mine)
