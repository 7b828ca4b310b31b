"""Retrieval on notes the test writes: hybrid finds what each side alone misses, filters
apply inside the search (a filtered note is found even when it ranks below top-k
unfiltered), every mode, and the hit fields other stages rely on."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from ragcli.config import load_config
from ragcli.errors import UsageError
from ragcli.pipeline import index
from ragcli.retrieve import Filters, Searcher, fts_query, fuse_convex

from conftest import needs_corpora

ERRORS = {
    "sync-errors.md": "# Sync errors\n\nWhen sync fails the app shows an error code. Error ZX-4471 means the "
                      "upload was rejected because the vault is over its storage quota; delete large "
                      "attachments or move to a bigger plan.\n",
    "network-errors.md": "# Network errors\n\nError ZX-4417 means the connection to the sync server timed out; "
                         "check the proxy settings and try again. Error ZX-4174 is a TLS handshake failure.\n",
    "auth-errors.md": "# Login errors\n\nError ZX-7144 means the session token expired. Error ZX-1447 means "
                      "two-factor authentication failed. Sign out and sign in again.\n",
    "storage.md": "# Storage quota\n\nEach plan comes with a storage quota for synced vaults. Attachments "
                  "such as PDFs and images use most of it. The settings page shows how much is used.\n",
    "password.md": "# Resetting a forgotten password\n\nOpen Settings, choose Account, then Reset password. "
                   "A link arrives by email and stays valid for one hour.\n",
    "shortcuts.md": "# Keyboard shortcuts\n\nPress Ctrl+P for the command palette and Ctrl+O to open a note "
                    "quickly. Shortcuts can be changed under Hotkeys.\n",
    "garden.md": "# Garden\n\nTomatoes need full sun, deep watering twice a week, and a stake once they flower.\n",
    "bread.md": "# Bread\n\nFeed the sourdough starter equal weights of flour and water every day.\n",
}

TOMATO_NOTES = 12  # notes about tomatoes that outrank the archived one for "tomato"


@pytest.fixture(scope="module")
def vault(tmp_path_factory, models_dir):
    """One index for the module (embedding costs seconds); RAG_HOME points at it per test."""
    root = tmp_path_factory.mktemp("vault")
    notes = root / "notes"
    notes.mkdir()
    for name, text in ERRORS.items():
        (notes / name).write_text(text)
    garden = notes / "garden-log"
    garden.mkdir()
    for i in range(TOMATO_NOTES):
        (garden / f"tomato-{i:02d}.md").write_text(
            f"---\ndate: 2024-05-{i + 1:02d}\ntags: [garden]\n---\n# Tomato diary {i}\n\n"
            f"Tomato plants, tomato seedlings and tomato harvest notes for day {i}: the tomato "
            f"vines grew and the tomatoes ripened.\n")
    archive = notes / "archive"
    archive.mkdir()
    (archive / "old-plans.md").write_text(
        "---\ndate: 2019-03-02\ntags: [archive]\n---\n# Old plans\n\nIdeas for the shed, a new fence, "
        "paint for the door, and maybe a tomato bed by the wall.\n")
    (notes / "inline.md").write_text("# Inline tagged\n\nA note about the fence and a tomato #someday\n")
    home = root / "home"
    home.mkdir()
    env = {"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models_dir)}
    config = load_config(env=env)
    report = index(config, [notes])
    assert not report.files_failed
    return config, notes


@pytest.fixture()
def searcher(vault):
    config, _notes = vault
    s = Searcher(config)
    yield s
    s.close()


def _names(hits) -> list[str]:
    return [Path(h.chunk.path).name for h in hits]


def test_hybrid_finds_an_exact_error_code_that_vector_alone_misses(searcher):
    query = "ZX-4471"
    vector = _names(searcher.search(query, k=3, mode="vector"))
    keyword = _names(searcher.search(query, k=3, mode="keyword"))
    hybrid = _names(searcher.search(query, k=3, mode="hybrid"))
    assert vector[0] != "sync-errors.md"  # word pieces of a code mean little to the embedding
    assert keyword[0] == "sync-errors.md"
    assert hybrid[0] == "sync-errors.md"


def test_hybrid_finds_a_paraphrase_that_keyword_alone_misses(searcher):
    query = "I can't recall the secret word for my profile"  # no word in common with password.md
    keyword = _names(searcher.search(query, k=3, mode="keyword"))
    vector = _names(searcher.search(query, k=3, mode="vector"))
    hybrid = _names(searcher.search(query, k=3, mode="hybrid"))
    assert "password.md" not in keyword
    assert vector[0] == "password.md"
    assert hybrid[0] == "password.md"


@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
def test_filters_apply_inside_the_search_not_after_top_k(searcher, mode):
    unfiltered = _names(searcher.search("tomato", k=5, mode=mode))
    assert "old-plans.md" not in unfiltered  # the diary notes fill the top 5
    by_tag = _names(searcher.search("tomato", k=5, mode=mode, filters=Filters(tag="archive")))
    assert by_tag == ["old-plans.md"]
    by_path = _names(searcher.search("tomato", k=5, mode=mode, filters=Filters(path="*/archive/*")))
    assert by_path == ["old-plans.md"]
    by_date = _names(searcher.search("tomato", k=5, mode=mode, filters=Filters(until="2020-01-01")))
    assert by_date == ["old-plans.md"]
    window = searcher.search("tomato", k=20, mode=mode, filters=Filters(since="2024-05-03", until="2024-05-04"))
    assert sorted(_names(window)) == ["tomato-02.md", "tomato-03.md"]
    inline = _names(searcher.search("tomato", k=5, mode=mode, filters=Filters(tag="#someday")))
    assert inline == ["inline.md"]
    assert searcher.search("tomato", k=5, mode=mode, filters=Filters(tag="no-such-tag")) == []


def test_file_time_is_the_date_of_a_note_without_one(vault, searcher):
    _config, notes = vault
    old = time.mktime((2001, 1, 1, 12, 0, 0, 0, 0, -1))
    os.utime(notes / "bread.md", (old, old))
    # the manifest keeps the mtime it indexed: re-index so it sees the new one
    index(vault[0], [notes])
    hits = searcher.search("sourdough", k=5, mode="hybrid", filters=Filters(since="2000-12-31", until="2001-01-02"))
    assert _names(hits) == ["bread.md"]


def test_hybrid_hits_carry_the_cosine_and_bm25_of_each_side(searcher):
    query = "storage quota for attachments"
    hits = searcher.search(query, k=5, mode="hybrid")
    assert hits and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    qvec = searcher.embedder.embed([query])[0]
    for hit in hits:
        assert hit.vector_score is not None and hit.keyword_score is not None
        own = searcher.embedder.embed([hit.chunk.embed_text()])[0]
        assert hit.vector_score == pytest.approx(float(np.dot(qvec, own)), abs=1e-3)
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
    vector_hits = searcher.search(query, k=5, mode="vector")
    assert all(h.keyword_score is None and -1.0 <= h.vector_score <= 1.0 for h in vector_hits)


def test_modes_and_odd_queries(searcher):
    with pytest.raises(UsageError):
        searcher.search("anything", mode="fuzzy")
    assert searcher.search("   ", k=5) == []
    # FTS5 syntax in user text is only words: no error, and the hits hold one of them
    # (stemmed as the index stems: "near" would match "nearing"; "and" is a stopword)
    hits = searcher.search('"sourdough AND (NEAR', k=3, mode="keyword")
    assert "bread.md" in _names(hits)
    for hit in hits:
        text = " ".join((hit.chunk.title, hit.chunk.heading, hit.chunk.text))
        assert re.search(r"\b(sourdough|near)", text, re.IGNORECASE), text
    assert searcher.search("to be or not to be", k=3, mode="keyword") is not None
    assert len(searcher.search("tomato", k=3, mode="hybrid")) == 3


def test_fts_query_is_quoted_words_without_stopwords():
    assert fts_query('what does "E4021" OR NEAR(x) mean') == '"e4021" OR "near" OR "mean"'
    assert fts_query("to be or not to be") == '"to" OR "be" OR "or" OR "not"'
    assert fts_query("?!") == ""


def test_fusion_functions():
    vec = [("a", 0.9), ("b", 0.8), ("c", 0.1)]
    kw = [("c", 12.0), ("a", 6.0)]
    fused = dict(fuse_convex(dict(vec), {**dict(kw), "b": 0.0}, alpha=0.5))
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)
    assert fused["b"] == pytest.approx(0.5 * 0.875)
    assert fused["c"] == pytest.approx(0.5)
    # scaled against "every query term once" (sum of idf = 24): a weak best match stays weak
    scaled = dict(fuse_convex(dict(vec), {**dict(kw), "b": 0.0}, alpha=0.5, keyword_scale=24.0))
    assert scaled["c"] == pytest.approx(0.5 * 0.5)
    assert scaled["a"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.25)


def test_keyword_idf_matches_fts5(searcher):
    import math

    files, chunks = searcher.index.counts()
    rare, common = searcher.index.keyword_idf(['"zx"', '"tomato"'])
    n_zx = len(searcher.index.keyword_search('"zx"', 1000))
    assert rare == pytest.approx(math.log((chunks - n_zx + 0.5) / (n_zx + 0.5)))
    assert common < rare


def test_keyword_weight_follows_how_much_of_the_query_its_best_match_covers():
    vec = {"a": 0.6, "b": 0.5, "k": 0.1}  # k: found by the keyword side only, far below the rest
    kw = {"a": 0.0, "b": 0.0, "k": 6.0}  # k covers a quarter of the query (24 = every term once)
    fixed = dict(fuse_convex(vec, kw, alpha=0.5, keyword_scale=24.0))
    assert fixed["a"] == pytest.approx(0.5) and fixed["k"] == pytest.approx(0.5 * 0.25)
    # full weight only from half the query up: a quarter gets half of the keyword weight
    covered = dict(fuse_convex(vec, kw, alpha=0.5, keyword_scale=24.0, full_cover=0.5))
    assert covered["a"] == pytest.approx(0.75) and covered["b"] == pytest.approx(0.75 * 0.8)
    assert covered["k"] == pytest.approx(0.25 * 0.25)
    # a match covering half the query or more keeps the full keyword weight
    full = dict(fuse_convex(vec, {**kw, "k": 12.0}, alpha=0.5, keyword_scale=24.0, full_cover=0.5))
    assert full["a"] == pytest.approx(0.5) and full["k"] == pytest.approx(0.5 * 0.5)


def test_a_spelling_slip_finds_the_word_in_the_notes(searcher):
    from dataclasses import replace

    # "sourdugh" and "attachmnets" are in no chunk; "sourdough" and "attachments" are
    for query, wanted in (("sourdugh starter", "bread.md"), ("attachmnets quota", "storage.md")):
        hits = _names(searcher.search(query, k=3, mode="keyword"))
        assert hits and hits[0] == wanted, (query, hits)
        assert _names(searcher.search(query, k=3, mode="hybrid"))[0] == wanted
    plain = replace(searcher.fusion, respell=False)
    searcher.fusion = plain  # without the fallback the slip finds nothing by keyword
    assert "bread.md" not in _names(searcher.search("sourdugh", k=3, mode="keyword"))


def test_respell_only_touches_words_in_no_chunk_and_only_near_ones(searcher):
    fixes = searcher.index.respell(["sourdugh", "tomatoes", "recieve", "kubernetes", "tomatto", "fnce"])
    # a word that is there stays; a word far from every indexed term stays; short words stay
    assert fixes == {"sourdugh": "sourdough", "tomatto": "tomato"}


def test_a_real_word_in_no_note_is_not_taken_for_a_slip(searcher):
    from ragcli.retrieve.spelling import is_known_word

    # "watery" is in no note but its stem is a letter from "water" (deep watering): the store
    # would offer that, but it is an English word, so search leaves it as it is
    assert searcher.index.respell(["watery"]) == {"watery": "water"}
    assert is_known_word("watery") and is_known_word("movies") and is_known_word("fractions")
    assert not is_known_word("sourdugh") and not is_known_word("syncronize")
    assert searcher.search("watery", k=3, mode="keyword") == []


def test_each_note_keeps_the_centroid_of_its_chunks(searcher):
    hits = searcher.search("tomato", k=40, mode="keyword")
    one = next(h for h in hits if h.chunk.path.endswith("inline.md"))  # a note of one chunk
    centroid = searcher.index.note_centroids([one.chunk.id])[one.chunk.id]
    own = searcher.embedder.embed_documents([one.chunk.embed_text()])[0]
    assert float(centroid @ own) > 0.9999  # one chunk: the centroid is that chunk's vector
    assert np.linalg.norm(centroid) == pytest.approx(1.0, abs=1e-5)


def test_note_evidence_is_added_to_each_chunks_cosine(searcher):
    from ragcli.retrieve import Fusion

    query = "how do I get back into my account"
    qvec = searcher.embedder.embed_queries([query])[0]
    searcher.fusion = Fusion(note_weight=0.7)
    try:
        hits = searcher.search(query, k=8, mode="vector")
        centroids = searcher.index.note_centroids([h.chunk.id for h in hits])
        for hit in hits:
            own = searcher.embedder.embed_documents([hit.chunk.embed_text()])[0]
            assert hit.vector_score == pytest.approx(float(own @ qvec), abs=1e-3)  # the chunk's own cosine
            assert hit.score == pytest.approx(hit.vector_score + 0.7 * float(centroids[hit.chunk.id] @ qvec),
                                              abs=1e-3)
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
        searcher.fusion = Fusion(note_weight=0.0)
        plain = searcher.search(query, k=8, mode="vector")
        assert all(h.score == pytest.approx(h.vector_score) for h in plain)
    finally:
        searcher.fusion = Fusion()


def test_note_centroids_follow_edits_and_deletions(tmp_path, models_dir):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kettle.md").write_text("# Kettle\n\nDescale the kettle with vinegar once a month.\n\n## More\n\n"
                                     "Rinse twice afterwards.\n")
    (notes / "bike.md").write_text("# Bike\n\nPump the tyres to the pressure printed on the sidewall.\n")
    config = load_config(env={"RAG_HOME": str(tmp_path / "home"), "RAG_MODELS_DIR": str(models_dir)})
    index(config, [notes])
    s = Searcher(config)
    try:
        kettle = [h.chunk for h in s.search("kettle", k=5, mode="keyword") if h.chunk.path.endswith("kettle.md")]
        bike = s.search("tyres sidewall", k=1, mode="keyword")[0].chunk.id
        before = s.index.note_centroids([c.id for c in kettle] + [bike])
        idf_before = s.index.keyword_idf(['"vinegar"', '"rinse"'])  # remembered by this reader
        assert set(before) == {*(c.id for c in kettle), bike}
        assert len(kettle) == 2 and np.array_equal(before[kettle[0].id], before[kettle[1].id])
        mean = s.embedder.embed_documents([c.embed_text() for c in kettle]).mean(axis=0)
        assert float(before[kettle[0].id] @ (mean / np.linalg.norm(mean))) > 0.9999
        (notes / "kettle.md").write_text("# Kettle\n\nA kettle boils water for tea in about two minutes.\n\n"
                                         "## More\n\nRinse twice afterwards.\n")
        (notes / "bike.md").unlink()
        index(config, [notes])
        rinse = s.search("rinse twice afterwards", k=1, mode="keyword")[0].chunk.id
        after = s.index.note_centroids([rinse, bike])
        assert bike not in after  # the deleted note's centroid went with it
        assert float(after[rinse] @ before[kettle[0].id]) < 0.99  # a new opening paragraph moved it
        idf_after = s.index.keyword_idf(['"vinegar"', '"rinse"'])  # the index changed: counted again
        fresh = Searcher(config)
        try:
            assert idf_after == fresh.index.keyword_idf(['"vinegar"', '"rinse"']) != idf_before
        finally:
            fresh.close()
    finally:
        s.close()


@needs_corpora
def test_the_most_recent_of_a_kind_of_report_is_the_latest_dated_one(tmp_path, models_dir):
    """"The most recent team report" is the latest-dated file of that kind, though the older
    one words the answer closer to the question; a question naming no period, or another kind
    of note, is searched as before."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for year, text in (("2023", "In the team report, the build time was 12 minutes on average."),
                       ("2024", "Builds took 9 minutes this year, after the cache was moved."),
                       ("2025", "Ideas for the offsite: hiking, a boat trip.")):
        title = "Team report" if year != "2025" else "Offsite plans"
        (notes / f"{title} {year}.md").write_text(f"---\ndate: {year}-12-31\ntags: [team]\n---\n"
                                                   f"# {title} {year}\n\n{text}\n")
    config = load_config(env={"RAG_HOME": str(tmp_path / "home"), "RAG_MODELS_DIR": str(models_dir)})
    index(config, [notes])
    s = Searcher(config)
    try:
        plain = s.search("What was the build time in the team report?", k=3)
        assert plain[0].chunk.path.endswith("Team report 2023.md")  # its words are the question's
        latest = s.search("What was the build time in the most recent team report?", k=3)
        assert latest[0].chunk.path.endswith("Team report 2024.md"), [h.chunk.path for h in latest]
        assert [h.rank for h in latest] == list(range(1, len(latest) + 1))
        assert not any(h.chunk.path.endswith("Team report 2023.md") for h in latest)  # the older one
        named = s.search("What was the build time in the most recent team report?", k=3,
                         filters=Filters(path="*2023*"))  # a path the reader chose wins
        assert named[0].chunk.path.endswith("Team report 2023.md")
    finally:
        s.close()


def test_paraphrased_questions_find_their_note_on_the_help_vault(help_vault_env):
    """Issue 13: questions in the user's words, not the note's (bench/questions/paraphrase.jsonl)."""
    import json

    from ragcli.retrieve import Fusion
    from conftest import ROOT, VAULT

    before = Fusion(full_keyword_cover=0.0, note_weight=0.0)
    questions = [json.loads(line)
                 for line in (ROOT / "bench" / "questions" / "paraphrase.jsonl").read_text().splitlines()]
    s = Searcher(load_config(env=help_vault_env))
    found = {"before": 0, "after": 0}
    try:
        for q in questions:
            wanted = {str(VAULT / p) for p in [q["path"], *q["also"]]}
            for name, fusion in (("before", before), ("after", Fusion())):
                s.fusion = fusion
                top: list[str] = []
                for hit in s.search(q["question"], k=50, mode="hybrid"):
                    if hit.chunk.path not in top:
                        top.append(hit.chunk.path)
                found[name] += bool(wanted.intersection(top[:5]))
    finally:
        s.close()
    assert found["after"] >= 0.85 * len(questions), found
    assert found["after"] >= found["before"] + 5, found


@pytest.mark.parametrize("query", ["pour over coffee ratio", "E4012 error code", "how long should bread rise"])
def test_candidate_keyword_scores_equal_the_ranking(searcher, query):
    """Hybrid search asks for the bm25 of the vector side's candidates on their own: the same
    figures as ranking every match, and nothing for a candidate that matches no term."""
    match = fts_query(query)
    idx = searcher.index
    ranked = dict(idx.keyword_search(match, 100_000))
    ids = [c for c, _ in idx.vector_search(searcher.embedder.embed_queries([query])[0], 20)]
    ids += [c for c in list(ranked)[:3] if c not in ids]  # some of them match for sure
    scores = idx.keyword_scores(match, ids)
    assert scores == {c: ranked[c] for c in ids if c in ranked}
    assert scores and len(scores) < len(ids)  # some match and some do not: the check means something
    within = sorted({ch.path for ch in idx.chunks(list(ranked)[:1]).values()})  # one note only
    paths = {cid: ch.path for cid, ch in idx.chunks(list(ranked)).items()}
    assert idx.keyword_search(match, 10, within) == [(c, s) for c, s in ranked.items() if paths[c] in within][:10]


@pytest.mark.parametrize("query", ["tomato harvest", "error code sync", "storage quota for the fence"])
def test_keyword_top_ranked_in_parts_on_threads_equals_one_scan(searcher, query):
    """A large index is ranked in rowid ranges on worker threads: the merged top is the top
    of one scan over every chunk, with the same bm25, filtered or not."""
    from ragcli.retrieve.ranking import KeywordRanker

    match = fts_query(query)
    idx = searcher.index
    ranker = KeywordRanker(idx, parts=3, split_from=0)
    try:
        whole = idx.keyword_search(match, 8)
        assert len(whole) >= 3  # the query matches in several parts: the comparison means something
        def ranked(rows):
            return sorted(rows, key=lambda r: (-r[1], r[0]))
        assert ranked(ranker.start(match, 8)()) == ranked(whole)
        within = sorted({ch.path for ch in idx.chunks([c for c, _ in whole]).values()})[:1]
        assert ranker.start(match, 8, within)() == idx.keyword_search(match, 8, within)
    finally:
        ranker.close()


ACRONYMS = {
    "plans.md": "# Health plans\n\nThe Federal Employees Health Benefits (FEHB) program covers employees, "
                "retirees and their families.\n",
    "results.md": "# FY 2016 results\n\nIn FY 2016, projected FEHB premiums went to $503.35 from $481.94.\n",
    "council.md": "# The council\n\nThe chief human capital officers meet monthly. Minutes are filed by the "
                  "CHCO secretary.\n",
    "lab.md": "# Lab\n\nBreast cancer (BC) samples are kept cold.\n",
}


def test_a_name_the_question_spells_out_is_searched_by_the_initials_the_notes_define(tmp_path, models_dir):
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in ACRONYMS.items():
        (notes / name).write_text(text)
    config = load_config(env={"RAG_HOME": str(tmp_path / "home"), "RAG_MODELS_DIR": str(models_dir)})
    index(config, [notes])
    searcher = Searcher(config)
    try:
        asked = "How much did federal employee health benefit costs grow?"
        assert searcher.with_initials(asked) == asked + " (FEHB)"
        # the page with the figure holds none of the question's words but the initials
        assert "results.md" in _names(searcher.search(asked, k=4, mode="keyword"))
        assert "results.md" not in _names(searcher.search("federal employee costs grow", k=4, mode="keyword"))
        # initials the notes use, but never right after (or before) the name, are not its
        # definition; two letters name too many things to be searched for
        for plain in ("What do the chief human capital officers do?", "Where are breast cancer samples kept?"):
            assert searcher.with_initials(plain) == plain
    finally:
        searcher.close()
