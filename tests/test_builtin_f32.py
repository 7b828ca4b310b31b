"""The built-in model runs as F32 (faster on the CPU than F16, the same vectors): an index that
the F16 conversion built is taken over as it is, by readers and by `rag index`, not rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ragcli.config import load_config
from helpers import ok, rag, sql, verify_json, write_notes

NOTES = {
    "espresso.md": "# Espresso\n\nDose 18 g in, 36 g out, in 25 to 30 seconds.\n",
    "bread.md": "# Bread\n\nThe loaf takes 500 g flour, 350 g water and 10 g salt.\n",
}


def _fingerprint(home: Path) -> dict:
    import sqlite3

    db = sqlite3.connect(home / "index" / "manifest.sqlite")
    try:
        return json.loads(db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0])
    finally:
        db.close()


def _as_recorded_by(home: Path, model_id: str) -> None:
    """The index as a release that embedded with ``model_id`` left it: its fingerprint names that
    model (the vectors themselves agree with F32's to cosine 0.999999)."""
    fingerprint = dict(_fingerprint(home), embedding_model=model_id)
    sql(home, "UPDATE meta SET value = ? WHERE key = 'fingerprint'", (json.dumps(fingerprint),))


def _f16_id() -> str:
    from ragcli.embed import model_id_for
    from ragcli.embed.builtin import convert_builtin_embed
    from ragcli.models.packages import EMBED_NAME

    config = load_config()
    return model_id_for(convert_builtin_embed(config, file_type="f16"), EMBED_NAME, Path(config.models_dir))


def test_f32_and_f16_conversions_embed_the_same_vectors():
    from ragcli.embed import make_embedder
    from ragcli.embed.builtin import convert_builtin_embed
    from ragcli.embed.llama import MINILM_MAX_TOKENS, LlamaEmbedder

    texts = [*NOTES.values(), "How long should the shot take?", "`![[Internal links]]` embeds a note."]
    today = make_embedder(load_config())
    f16 = LlamaEmbedder(convert_builtin_embed(load_config(), file_type="f16"), model_id="f16", n_threads=1,
                        max_tokens=MINILM_MAX_TOKENS)
    try:
        assert ".f32." in today.path.name
        cosines = (today.embed(texts) * f16.embed(texts)).sum(axis=1)
        assert float(np.min(cosines)) > 0.9999
    finally:
        today.close()
        f16.close()


def test_an_index_the_f16_conversion_built_is_taken_over_without_a_rebuild(tmp_path, rag_home):
    notes = write_notes(tmp_path / "notes", NOTES)
    ok(rag("index", notes, "--json", home=rag_home))
    today = _fingerprint(rag_home)["embedding_model"]
    old = _f16_id()
    assert old != today
    _as_recorded_by(rag_home, old)

    found = json.loads(ok(rag("search", "--json", "espresso shot time", home=rag_home)).stdout)
    assert Path(found["results"][0]["path"]).name == "espresso.md"
    assert _fingerprint(rag_home)["embedding_model"] == old  # a reader takes it over, writes nothing

    (notes / "bread.md").write_text(NOTES["bread.md"] + "\nBake at 230 C for 40 minutes.\n")
    summary = json.loads(ok(rag("index", notes, "--json", home=rag_home)).stdout)
    assert (summary["files_indexed"], summary["files_unchanged"]) == (1, 1)  # the edit, and nothing else
    assert _fingerprint(rag_home)["embedding_model"] == today
    code, report = verify_json(rag_home)
    assert code == 0, report


def test_an_index_another_model_built_is_still_refused(tmp_path, rag_home):
    notes = write_notes(tmp_path / "notes", NOTES)
    ok(rag("index", notes, "--json", home=rag_home))
    _f16_id()  # the earlier conversion is there, and is not what built this index
    _as_recorded_by(rag_home, "bge-small-en-v1.5@0123456789ab")

    (notes / "bread.md").write_text(NOTES["bread.md"] + "\nBake at 230 C for 40 minutes.\n")  # a model to load
    for args in (("search", "espresso"), ("index", notes)):
        proc = rag(*args, home=rag_home, text=True)
        assert proc.returncode != 0
        assert "bge-small-en-v1.5@0123456789ab" in proc.stderr and "Traceback" not in proc.stderr
