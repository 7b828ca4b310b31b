"""The passage-vector cache beside the index (store/passages.py): a question's passages are
read from it instead of embedded, and it is never wrong: an edited note's passages are
embedded anew, another embedder's rows are never read, and a torn file is started anew.
Real index in a temp dir, the real embedding model, `rag ask` end to end."""

from __future__ import annotations

import json
import os
import sqlite3

import numpy as np

from ragcli.cli import main
from ragcli.config import load_config
from ragcli.pipeline import index
from ragcli.pipeline.answer import answer
from ragcli.retrieve import Searcher
from ragcli.store.passages import PASSAGES_NAME, PassageCache

QUESTION = "How many clicks for espresso on my grinder?"
NOTE = ("# Grinder\n\nThe grinder sits on the counter by the kettle.\n\n"
        "For espresso, use {clicks} clicks on the grinder.\n\nFor filter coffee, use 24 clicks.\n")


def _vault(tmp_path, clicks: int = 8):
    vault = tmp_path / "vault"
    vault.mkdir(exist_ok=True)
    (vault / "Grinder.md").write_text(NOTE.format(clicks=clicks), encoding="utf-8")
    (vault / "Tea.md").write_text("# Tea\n\nSteep green tea for two minutes at 80°C.\n", encoding="utf-8")
    return vault


def _rows(config) -> int:
    with sqlite3.connect(config.index_dir / PASSAGES_NAME) as db:
        return db.execute("SELECT count(*) FROM vectors").fetchone()[0]


def _quotes(config) -> tuple[list[str], list[str]]:
    """The quotes of QUESTION from a fresh Searcher (nothing in memory, as a new `rag ask`),
    and what it embedded: the search's query, and the passages that were not on disk yet."""
    searcher = Searcher(config)
    embedded: list[str] = []
    embed = searcher.embedder.embed
    searcher.embedder.embed = lambda texts: (embedded.extend(texts), embed(texts))[1]  # a record, not a stand-in
    try:
        result = answer(config, QUESTION, searcher=searcher, quotes_only=True)
    finally:
        searcher.close()
    return [q.text for q in result.quotes], embedded


def test_second_ask_embeds_nothing_and_quotes_the_same(tmp_path):
    config = load_config()
    index(config, [_vault(tmp_path)])
    old = os.umask(0o022)  # a usual umask: the cache's files must not rely on the caller's
    try:
        first, embedded = _quotes(config)
    finally:
        os.umask(old)
    assert any("8 clicks" in q for q in first) and embedded
    assert _rows(config) >= len(set(embedded))
    for part in config.index_dir.glob(PASSAGES_NAME + "*"):  # the file and its WAL: private, as the index
        assert part.stat().st_mode & 0o077 == 0, part
    again, embedded_again = _quotes(config)
    assert again == first
    assert set(embedded_again) <= {QUESTION}  # the search's query vector; every passage came from the cache


def test_an_edited_note_is_embedded_anew(tmp_path):
    config = load_config()
    vault = _vault(tmp_path)
    index(config, [vault])
    _quotes(config)
    _vault(tmp_path, clicks=11)
    index(config, [vault])
    quotes, embedded = _quotes(config)
    assert any("11 clicks" in q for q in quotes) and not any("8 clicks" in q for q in quotes)
    # the edited sentence was embedded, not read: its text is a new key
    assert any("11 clicks" in t for t in embedded)
    assert not any("8 clicks" in t for t in embedded)
    # and what the cache holds for it now is exactly what the embedder makes of it
    searcher = Searcher(config)
    try:
        text = next(t for t in embedded if "11 clicks" in t)
        cached = searcher.embed_passages([text])[0]
        assert np.array_equal(cached, searcher.embedder.embed([text])[0])
    finally:
        searcher.close()


def test_another_embedders_rows_are_never_read(tmp_path):
    path = tmp_path / PASSAGES_NAME
    mine = PassageCache(path, {"model": "a", "dim": 3})
    mine.put({"hello": np.array([1, 0, 0], dtype=np.float32)})
    theirs = PassageCache(path, {"model": "b", "dim": 3})  # opened beside the first: same file
    assert theirs.get(["hello"], 3) == {}
    theirs.put({"hello": np.array([0, 1, 0], dtype=np.float32)})
    # the file now holds the other embedder's rows (its open emptied it), and none reads as mine
    assert mine.get(["hello"], 3) == {}
    mine.close()
    theirs.close()


def test_oldest_rows_go_past_the_limit(tmp_path):
    cache = PassageCache(tmp_path / PASSAGES_NAME, {"model": "a", "dim": 2}, max_rows=3)
    for n in range(5):
        cache.put({f"t{n}": np.array([n, 1], dtype=np.float32)})
    assert sorted(cache.get([f"t{n}" for n in range(5)], 2)) == ["t2", "t3", "t4"]
    cache.close()


def test_a_torn_cache_file_is_started_anew(tmp_path, capsys):
    config = load_config()
    index(config, [_vault(tmp_path)])
    first, _ = _quotes(config)
    path = config.index_dir / PASSAGES_NAME
    size = path.stat().st_size
    # a file cut short (a copy or a disk that stopped half-way), then one overwritten by garbage
    for damage in (lambda: path.write_bytes(path.read_bytes()[: size // 2]),
                   lambda: path.write_bytes(b"\x00garbage" * 512)):
        for suffix in ("-wal", "-shm"):
            (path.parent / (path.name + suffix)).unlink(missing_ok=True)
        damage()
        assert main(["ask", QUESTION, "--quotes", "--json"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert [q["text"] for q in shown["quotes"]] == first
        assert _rows(config) > 0  # started anew and filled again
