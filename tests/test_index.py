"""`rag index` / `rag search` / `rag status` end to end: real files, real models, real Chroma."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from ragcli.cli import main
from conftest import EXAMPLES, PDFS, VAULT, needs_corpora
from helpers import write_vault


def run_json(capsys, *args) -> tuple[int, dict]:
    code = main(list(args))
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else {})


@pytest.fixture
def vault(tmp_path) -> Path:
    target = tmp_path / "vault"
    shutil.copytree(EXAMPLES / "vault", target)
    return target


def paths_of(results: dict) -> list[str]:
    return [r["path"] for r in results["results"]]


def test_index_example_vault_then_nothing_to_do(vault, capsys):
    code, report = run_json(capsys, "index", str(vault), "--json")
    assert code == 0
    assert set(report) >= {"roots", "files_seen", "files_indexed", "files_unchanged", "files_removed",
                           "files_failed", "chunks_added", "chunks_removed", "seconds"}
    assert report["files_indexed"] == 13  # 12 notes + 1 PDF; drafts/ is .ragignore'd, .obsidian hidden
    assert report["files_failed"] == []
    assert report["chunks_added"] >= 13
    code, again = run_json(capsys, "index", "--json")  # no path: the remembered roots
    assert code == 0
    assert again["files_indexed"] == 0 and again["chunks_added"] == 0 and again["chunks_removed"] == 0
    assert again["files_unchanged"] == 13


def test_search_finds_notes_pdf_pages_and_obeys_ragignore(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    _, res = run_json(capsys, "search", "bi-encoder dense passage retrieval", "--json")
    top = res["results"][0]
    assert top["path"] == str(vault / "Reading" / "Dense Passage Retrieval.md")
    assert set(top) >= {"rank", "path", "title", "heading", "line_start", "line_end", "page", "score", "text"}
    assert top["line_start"] >= 1 and top["line_end"] >= top["line_start"]
    _, res = run_json(capsys, "search", "moka pot rubber gasket replace", "--json", "-k", "3")
    pdf_hits = [r for r in res["results"] if r["path"].endswith(".pdf")]
    assert pdf_hits and pdf_hits[0]["page"] == 2
    _, res = run_json(capsys, "search", "zebra-colored teapot", "--json", "--mode", "keyword")
    assert not any("drafts" in p for p in paths_of(res))


def test_embedded_note_is_findable_from_the_embedding_note(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    # Lisbon trip embeds the journal entry, which mentions the sourdough bake.
    _, res = run_json(capsys, "search", "75% hydration crust too pale", "--json", "-k", "10")
    assert str(vault / "Travel" / "Lisbon trip.md") in paths_of(res)


def test_edit_reindexes_exactly_that_note_and_its_embedders(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    note = vault / "Coffee" / "Grinders.md"
    note.write_text(note.read_text() + "\n## Niche Zero\n\nSingle-dose grinder with 63 mm conical burrs.\n")
    _, report = run_json(capsys, "index", "--json")
    assert report["files_indexed"] == 1
    assert 1 <= report["chunks_added"] <= 3
    _, res = run_json(capsys, "search", "Niche Zero conical burrs", "--json", "-k", "1")
    assert res["results"][0]["path"] == str(note)
    # The journal is embedded by the Lisbon note: both are re-indexed.
    journal = vault / "Journal" / "2026-03-14.md"
    journal.write_text(journal.read_text().replace("75% hydration", "78% hydration"))
    _, report = run_json(capsys, "index", "--json")
    assert report["files_indexed"] == 2


def test_touch_without_change_costs_no_embedding(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    note = vault / "Coffee" / "Espresso.md"
    os.utime(note, None)
    os.utime(note, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns + 10**9))
    _, report = run_json(capsys, "index", "--json")
    assert report["files_indexed"] == 0 and report["files_unchanged"] == 13


def test_rename_and_delete_leave_no_stale_hit(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    old = vault / "Recipes" / "Sourdough.md"
    new = vault / "Recipes" / "Country loaf.md"
    old.rename(new)
    (vault / "Dev" / "Git tricks.md").unlink()
    _, report = run_json(capsys, "index", "--json")
    assert report["files_removed"] == 2
    assert report["files_indexed"] >= 1
    _, res = run_json(capsys, "search", "sourdough autolyse stretch and fold", "--json", "-k", "20")
    assert str(old) not in paths_of(res)
    assert str(new) in paths_of(res)
    _, res = run_json(capsys, "search", "git bisect run", "--json", "-k", "20")
    assert not any(p.endswith("Git tricks.md") for p in paths_of(res))
    _, status = run_json(capsys, "status", "--json")
    assert status["files"] == 12


def test_status_json(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    code, status = run_json(capsys, "status", "--json")
    assert code == 0
    assert set(status) >= {"roots", "files", "chunks", "embedding_model", "index_bytes"}
    assert status["roots"] == [str(vault)]
    assert status["files"] == 13 and status["chunks"] > 13 and status["index_bytes"] > 0
    assert "MiniLM" in status["embedding_model"]


def test_changed_chunker_settings_are_explained_and_rebuild_fixes(vault, capsys, monkeypatch):
    main(["index", str(vault)])
    capsys.readouterr()
    monkeypatch.setenv("RAG_CHUNK_TOKENS", "120")
    code = main(["index"])  # nothing changed on disk: the settings are still checked
    err = capsys.readouterr().err
    assert code == 10
    assert "different settings" in err and "--rebuild" in err
    code, report = run_json(capsys, "index", "--rebuild", "--json")
    assert code == 0 and report["files_indexed"] == 13


def test_an_index_cut_by_an_earlier_chunker_is_read_again_with_its_vectors_reused(vault, capsys, rag_home):
    """Upgrading ragcli to a chunker that cuts notes otherwise (CHUNKER_VERSION) is no reason to
    stop: `rag index` refused with "rebuild it", and `rag watch` ended. The next run reads every
    file again on its own, and the chunks whose text is unchanged keep their vectors."""
    import sqlite3

    from ragcli.config import load_config
    from ragcli.ingest.chunk import CHUNKER_VERSION
    from ragcli.store.paths import MANIFEST_NAME

    main(["index", str(vault)])
    capsys.readouterr()
    # what the ragcli before this chunker version left in the manifest
    db = sqlite3.connect(load_config().index_dir / MANIFEST_NAME)
    fingerprint = json.loads(db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0])
    fingerprint["chunker"]["version"] = CHUNKER_VERSION - 1
    db.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (json.dumps(fingerprint),))
    db.commit()
    db.close()
    code, report = run_json(capsys, "index", "--json")
    assert code == 0 and report["reread"] and report["files_indexed"] == 13, report
    assert report["embedded"] == 0  # the example vault's text is cut as before: every vector was cached
    code, report = run_json(capsys, "index", "--json")
    assert code == 0 and not report["reread"] and report["files_unchanged"] == 13
    code, results = run_json(capsys, "search", "--json", "pressure regulator drip irrigation")
    assert code == 0 and results["results"][0]["path"].endswith("Garden irrigation.md")


def test_second_writer_is_refused_with_the_holder_named(vault, capsys, rag_home):
    from ragcli.config import load_config
    from ragcli.store import Index

    main(["index", str(vault)])
    capsys.readouterr()
    with Index.open_writer(load_config(), role="watch"):
        code = main(["index"])
    err = capsys.readouterr().err
    assert code == 7
    assert f"pid {os.getpid()}" in err and "watch" in err


def test_missing_root_is_an_error_not_a_mass_delete(vault, capsys, tmp_path):
    main(["index", str(vault)])
    capsys.readouterr()
    moved = tmp_path / "elsewhere"
    vault.rename(moved)
    code = main(["index"])
    assert code == 2
    assert "no such folder" in capsys.readouterr().err
    moved.rename(vault)
    _, status = run_json(capsys, "status", "--json")
    assert status["files"] == 13


def test_a_vault_reached_through_a_symlink_keeps_the_spelling_the_user_gave(tmp_path, capsys):
    """Results cite the path the user typed (through the link), never the link's target; the
    index stays consistent under that spelling: a second run is a no-op, an edit made through
    the real path is picked up, and verify agrees."""
    real = write_vault(tmp_path / "real" / "vault", notes=6)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "real", target_is_directory=True)
    given = link / "vault"
    code, report = run_json(capsys, "index", str(given), "--json")
    assert code == 0 and report["files_indexed"] == 6 and report["files_failed"] == []
    assert report["roots"] == [str(given)]
    code, status = run_json(capsys, "status", "--json")
    assert code == 0 and status["files"] == 6
    _, res = run_json(capsys, "search", "river mountain lantern", "--json", "-k", "20")
    assert paths_of(res) and all(p.startswith(str(given) + os.sep) for p in paths_of(res)), paths_of(res)

    code, again = run_json(capsys, "index", "--json")  # the remembered root, as given
    assert code == 0 and again["roots"] == [str(given)]
    assert (again["files_indexed"], again["files_unchanged"], again["files_removed"], again["chunks_added"],
            again["chunks_removed"]) == (0, 6, 0, 0, 0)

    edited = sorted(real.rglob("*.md"))[2]  # edited through the real path, not the link
    with edited.open("a", encoding="utf-8") as fh:
        fh.write("\n## Later\n\nA paragraph about symlinkedwombats.\n")
    code, after = run_json(capsys, "index", "--json")
    assert code == 0 and after["files_indexed"] == 1 and after["files_unchanged"] == 5, after
    _, res = run_json(capsys, "search", "symlinkedwombats", "--json", "--mode", "keyword")
    assert paths_of(res)[:1] == [str(given / edited.relative_to(real))], paths_of(res)

    code, verdict = run_json(capsys, "verify", "--json")
    assert code == 0 and verdict["ok"] and verdict["problems"] == [], verdict
    assert verdict["files"] == 6

    # The same folder named by its real path is the folder already indexed: nothing twice.
    code, same = run_json(capsys, "index", str(real), "--json")
    assert code == 0 and same["roots"] == [str(given)] and same["files_indexed"] == 0, same
    code, status = run_json(capsys, "status", "--json")
    assert status["files"] == 6 and status["roots"] == [str(given)]


def test_filters_apply_inside_the_search(vault, capsys):
    main(["index", str(vault)])
    capsys.readouterr()
    _, res = run_json(capsys, "search", "coffee", "--tag", "travel", "--json", "-k", "3")
    assert res["results"] and all(p.endswith("Lisbon trip.md") for p in paths_of(res))
    _, res = run_json(capsys, "search", "coffee", "--path", "*/Dev/*", "--json")
    assert res["results"] and all("/Dev/" in p for p in paths_of(res))
    _, res = run_json(capsys, "search", "plans", "--since", "2026-05-01", "--until", "2026-05-31", "--json")
    assert paths_of(res) and all(p.endswith("Lisbon trip.md") for p in paths_of(res))


# -- the real corpora (skipped when ../shared is absent) ----------------------------------

@needs_corpora
def test_obsidian_help_vault(help_vault_env, capsys, monkeypatch):
    # help_vault_env indexed the vault once for the whole session (shared with ask/chat tests).
    for key, value in help_vault_env.items():
        monkeypatch.setenv(key, value)
    notes = sorted(p for p in VAULT.rglob("*.md"))
    code, status = run_json(capsys, "status", "--json")
    assert code == 0 and status["files"] == len(notes) == 173
    code, again = run_json(capsys, "index", "--json")
    assert code == 0
    assert again["files_indexed"] == 0 and again["chunks_added"] == 0 and again["files_failed"] == []
    assert again["files_unchanged"] == 173
    _, res = run_json(capsys, "search", "how can I show the contents of one note inside another",
                      "--json", "-k", "5")
    assert str(VAULT / "Linking notes and files" / "Embed files.md") in paths_of(res)


@needs_corpora
def test_pdf_corpus(capsys):
    code, report = run_json(capsys, "index", str(PDFS), "--json")
    assert code == 0
    # four papers, the AES file that opens with an empty password, and the folder's MANIFEST.md
    assert report["files_indexed"] == 6
    reasons = {Path(f["path"]).name: f["reason"] for f in report["files_failed"]}
    assert len(reasons) == 3
    assert "encrypted" in reasons["tricky_encrypted_userpassword.pdf"]
    assert "no text layer" in reasons["tricky_scanned_no_text_layer.pdf"]
    assert "tricky_malformed_xref.pdf" in reasons
    _, res = run_json(capsys, "search", "dense passage retriever bi-encoder question and passage encoders",
                      "--json", "-k", "5")
    top = res["results"][0]
    assert "dpr" in Path(top["path"]).name and isinstance(top["page"], int) and top["page"] >= 1


def test_changed_prefix_or_pooling_is_explained_and_rebuild_re_embeds(vault, capsys, monkeypatch):
    code, first = run_json(capsys, "index", str(vault), "--json")
    assert code == 0 and first["embedded"] > 0
    monkeypatch.setenv("RAG_EMBED_DOCUMENT_PREFIX", "search_document: ")
    code = main(["index"])  # nothing changed on disk: the embedding settings are still checked
    err = capsys.readouterr().err
    assert code == 10 and "document_prefix" in err and "--rebuild" in err
    monkeypatch.setenv("RAG_EMBED_QUERY_PREFIX", "search_query: ")
    code = main(["search", "pour over"])  # a reader with other settings is refused as well
    assert code == 10 and "query_prefix" in capsys.readouterr().err
    code, rebuilt = run_json(capsys, "index", "--rebuild", "--json")
    # every chunk embedded again: a vector cached without the prefix is never reused for one with it
    assert code == 0 and rebuilt["embedded"] == first["embedded"]
    code, res = run_json(capsys, "search", "pour over", "--json")
    assert code == 0 and res["results"]
    monkeypatch.delenv("RAG_EMBED_DOCUMENT_PREFIX")
    monkeypatch.delenv("RAG_EMBED_QUERY_PREFIX")
    monkeypatch.setenv("RAG_EMBED_POOLING", "cls")
    code = main(["index"])
    assert code == 10 and "pooling" in capsys.readouterr().err
    monkeypatch.setenv("RAG_EMBED_POOLING", "mean")  # MiniLM's own pooling, said out loud: no change
    monkeypatch.setenv("RAG_EMBED_DOCUMENT_PREFIX", "search_document: ")
    monkeypatch.setenv("RAG_EMBED_QUERY_PREFIX", "search_query: ")
    code, again = run_json(capsys, "index", "--json")
    assert code == 0 and again["embedded"] == 0


def test_a_catalog_embedding_model_is_fingerprinted_with_its_prefixes(vault, capsys, monkeypatch, rag_home):
    """`rag models pull bge-small-en-v1.5 --set embed` points embed_model at the pulled file:
    its query instruction and CLS pooling take effect and are recorded, so an index built
    with them is refused (exit 10, with the fix) once they are set otherwise."""
    from ragcli.config import load_config
    from ragcli.embed.builtin import resolve_embed_model
    from ragcli.models.catalog import BGE_QUERY
    from ragcli.store import Index

    minilm = resolve_embed_model(load_config()).path  # the bundled MiniLM, under bge's file name
    pulled = rag_home / "pulled" / "bge-small-en-v1.5-q8_0.gguf"
    pulled.parent.mkdir()
    pulled.symlink_to(minilm)
    monkeypatch.setenv("RAG_EMBED_MODEL", str(pulled))
    code, first = run_json(capsys, "index", str(vault), "--json")
    assert code == 0 and first["embedded"] > 0
    idx = Index.open_reader(load_config())
    try:
        assert idx.fingerprint()["embedding"] == {"pooling": "cls", "query_prefix": BGE_QUERY}
    finally:
        idx.close()
    code, res = run_json(capsys, "search", "pour over", "--json")
    assert code == 0 and res["results"]
    (rag_home / "config.toml").write_text('embed_query_prefix = ""\n', encoding="utf-8")  # set on purpose
    code = main(["search", "pour over"])
    err = capsys.readouterr().err
    assert code == 10 and "query_prefix" in err and "--rebuild" in err
    code = main(["index"])  # nothing changed on disk: the embedding settings are still checked
    assert code == 10 and "query_prefix" in capsys.readouterr().err
    code, rebuilt = run_json(capsys, "index", "--rebuild", "--json")
    # only the query side changed: the chunks' cached vectors (same pooling, no document
    # prefix) are reused, nothing is embedded again
    assert code == 0 and rebuilt["files_indexed"] == first["files_indexed"] and rebuilt["embedded"] == 0
    code, res = run_json(capsys, "search", "pour over", "--json")
    assert code == 0 and res["results"]


def test_an_index_from_before_note_centroids_is_upgraded_in_place(vault, capsys, rag_home):
    import sqlite3

    code, first = run_json(capsys, "index", str(vault), "--json")
    assert code == 0 and first["embedded"] > 0
    manifest = rag_home / "index" / "manifest.sqlite"
    db = sqlite3.connect(manifest)
    before = dict(db.execute("SELECT path, centroid FROM notes"))
    db.execute("DROP TABLE notes")  # as 0.1 left it: no centroids, no record of them
    db.execute("DELETE FROM meta WHERE key = 'note_centroids'")
    db.commit()
    db.close()
    code, res = run_json(capsys, "search", "pour over", "--json")
    assert code == 0 and res["results"]  # a reader searches it as it is
    code, report = run_json(capsys, "verify", "--json")
    assert code == 0 and report["ok"], report
    code, again = run_json(capsys, "index", "--json")  # the next writer fills them from the cache
    assert code == 0 and again["embedded"] == 0 and again["files_indexed"] == 0
    db = sqlite3.connect(manifest)
    assert dict(db.execute("SELECT path, centroid FROM notes")) == before
    db.close()
    code, report = run_json(capsys, "verify", "--json")
    assert code == 0 and report["ok"], report


def _vector_keys(rag_home) -> tuple[set[str], set[str], int]:
    """(keys in the vector cache, keys the chunks use, candidates waiting to be pruned)."""
    import sqlite3

    db = sqlite3.connect(rag_home / "index" / "manifest.sqlite")
    try:
        cached = {k for (k,) in db.execute("SELECT key FROM vectors")}
        used = {k for (k,) in db.execute("SELECT vec_key FROM chunks")}
        waiting = db.execute("SELECT COUNT(*) FROM unpruned").fetchone()[0]
    finally:
        db.close()
    return cached, used, waiting


def test_a_deleted_notes_vectors_are_pruned_and_an_unchanged_run_checks_nothing(vault, capsys, rag_home):
    assert run_json(capsys, "index", str(vault), "--json")[0] == 0
    cached, used, waiting = _vector_keys(rag_home)
    assert cached == used and waiting == 0
    gone = vault / "Dev" / "Git tricks.md"
    gone.unlink()
    edited = vault / "Recipes" / "Sourdough.md"
    edited.write_text(edited.read_text() + "\n\n## Storage\n\nKeep the starter in a lidded jar of quartz glass.\n")
    code, report = run_json(capsys, "index", "--json")
    assert code == 0 and report["files_removed"] == 1 and report["files_indexed"] == 1
    after, used_after, waiting = _vector_keys(rag_home)
    assert after == used_after and waiting == 0  # the deleted note's and the old section's vectors are gone
    assert cached - used_after and not (cached - used_after) & after


def test_vectors_orphaned_before_tracking_are_pruned_once(vault, capsys, rag_home):
    """An index from before the candidate table: its first prune checks every vector."""
    import sqlite3

    assert run_json(capsys, "index", str(vault), "--json")[0] == 0
    db = sqlite3.connect(rag_home / "index" / "manifest.sqlite")
    db.execute("INSERT INTO vectors(key, vec) VALUES ('stray', x'00000000')")
    db.execute("DELETE FROM unpruned")
    db.execute("DELETE FROM meta WHERE key = 'prune_tracked'")
    db.commit()
    db.close()
    assert run_json(capsys, "index", "--json")[0] == 0
    cached, used, _ = _vector_keys(rag_home)
    assert "stray" not in cached and cached == used
