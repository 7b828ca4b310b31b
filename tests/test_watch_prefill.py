"""The watcher embeds evidence passages ahead of questions when idle (watch/prefill.py):
a real watcher process, the real embedding model, a vault in a temp dir. It fills the
passage cache with what a question's evidence would embed, an edit made while it fills is
still synced (and its passages follow), and it can be turned off. Waits have generous
deadlines; nothing is asserted on time."""

from __future__ import annotations

import json
import random
from functools import partial
from pathlib import Path

import pytest

from helpers import rag as _rag
from helpers import wait_for, write_notes
from test_watch import DEADLINE, NOTES, Daemon, Reader, atomic_save

from ragcli.config import load_config
from ragcli.pipeline.answer import answer
from ragcli.retrieve import Searcher
from ragcli.retrieve.passages import evidence_passages
from ragcli.retrieve.tails import as_read, sections_as_read
from ragcli.store import Index
from ragcli.store.passages import open_passages

rag = partial(_rag, text=True, timeout=120.0)
FILL_DEADLINE = 600.0  # a loaded 2-core machine embeds some thousand passages slowly


# One long section: its second chunk opens with the last words of the first, across a code
# fence, and a question reads it with that opening taken from the first (``retrieve.tails``).
ESCAPING = "# Escaping\n\n" + "\n\n".join(
    f"Formatting rule {i}: a backslash in front of a character shows it as typed, so the asterisks of "
    f"example {i} stay visible and the text is not bold.\n\n```markdown\n\\*\\*Example {i} is not bold\\*\\*\n```"
    for i in range(1, 9)) + "\n"


@pytest.fixture
def vault(tmp_path) -> Path:
    folder = write_notes(tmp_path / "vault", NOTES)
    (folder / "Escaping.md").write_text(ESCAPING, encoding="utf-8")
    return folder


@pytest.fixture
def daemons():
    started: list[Daemon] = []

    def start(home: Path, *args: str) -> Daemon:
        started.append(Daemon(home, *args))
        return started[-1]

    yield start
    for d in started:
        d.close()


def passages_of(config, path: str | None = None) -> list[str]:
    """What evidence would embed for the index's chunks (or one note's), as the watcher lists them."""
    index = Index.open_reader(config)
    try:
        ids = index.chunk_ids_newest_first()
        chunks = index.chunks(ids).values()
        sections = sections_as_read(index)
        return evidence_passages(as_read(c, sections) for c in chunks if path is None or c.path == path)
    finally:
        index.close()


def cached(config, searcher: Searcher, texts: list[str]) -> set[str]:
    cache = open_passages(config.index_dir, searcher.embedder)
    try:
        return set(cache.get(texts, int(searcher.embedder.dim)))
    finally:
        cache.close()


def progress(d: Daemon) -> dict:
    return (d.state() or {}).get("passages") or {}


def test_the_watcher_fills_the_passage_cache_and_a_new_question_embeds_no_passage(vault, rag_home, daemons):
    d = daemons(rag_home, str(vault), "--debounce", "0.3")
    d.wait_ready()
    done = wait_for(lambda: (p := progress(d)).get("state") == "done" and p, "the pre-fill to end",
                    FILL_DEADLINE, alive=d.proc, log=d.log_path)
    config = load_config()
    listed = passages_of(config)
    assert done["ready"] == done["total"] == len(listed) > 0
    assert "passages: " in rag("status").stdout and f"{len(listed):,} of {len(listed):,} ready" in rag("status").stdout

    searcher = Searcher(config)  # a new process's searcher: nothing in memory, the cache on disk
    try:
        assert cached(config, searcher, listed) == set(listed)
        index = searcher.index
        escaping = [c for c in index.chunks(index.chunk_ids_newest_first()).values() if c.path.endswith("Escaping.md")]
        sections = sections_as_read(index)
        assert any(as_read(c, sections).text != c.text for c in escaping), "no chunk opens with a tail"
        embedded: list[str] = []
        embed = searcher.embedder.embed
        searcher.embedder.embed = lambda texts: (embedded.extend(texts), embed(texts))[1]  # a record
        result = answer(config, "How long should sourdough proof, and where?", searcher=searcher,
                        quotes_only=True)
        escaped = answer(config, "How do I keep the asterisks of example 5 visible?", searcher=searcher,
                         quotes_only=True)
    finally:
        searcher.close()
    assert any("proof overnight" in q.text for q in result.quotes)
    assert any(q.path.endswith("Escaping.md") for q in escaped.quotes)
    # the questions (and single words) alone were embedded: every passage was ready, a chunk that
    # opens with a tail as the question reads it
    assert not [t for t in embedded if "\n" in t]
    assert d.terminate()[0] == 0


def test_an_edit_during_the_prefill_is_synced_and_its_passages_follow(tmp_path, rag_home, daemons):
    root = tmp_path / "many"
    rng = random.Random(7)
    words = "alder birch cedar dune ember fjord grove heath inlet juniper kelp loam marsh".split()
    for i in range(30):  # ~1,200 sentences: the pre-fill takes a while, so the edit lands inside it
        lines = [f"# Log {i}", ""] + [f"Entry {j}: the {rng.choice(words)} by the {rng.choice(words)} "
                                      f"was {rng.choice(words)} on day {j}." for j in range(40)]
        (root / f"log {i:02d}.md").parent.mkdir(parents=True, exist_ok=True)
        (root / f"log {i:02d}.md").write_text("\n".join(lines) + "\n")
    d = daemons(rag_home, str(root), "--debounce", "0.3")
    d.wait_ready()
    wait_for(lambda: progress(d).get("state") == "filling", "the pre-fill to start", FILL_DEADLINE,
             alive=d.proc, log=d.log_path)
    note = root / "log 05.md"
    atomic_save(note, "# Ferries\n\nThe overnight ferry to the islands leaves at ten. Marker: gangplank.\n")
    filling_when_edited = progress(d).get("state") in ("filling", "listing")

    reader = Reader()
    try:
        wait_for(lambda: str(note) in reader.keyword_paths("gangplank"), "the edit's sync", DEADLINE,
                 alive=d.proc, log=d.log_path)
        wait_for(lambda: reader.vector_top("when does the overnight ferry to the islands leave") == str(note),
                 "the edit's vectors", DEADLINE, alive=d.proc, log=d.log_path)
    finally:
        reader.close()
    wait_for(lambda: progress(d).get("state") == "done", "the pre-fill to end", FILL_DEADLINE,
             alive=d.proc, log=d.log_path)
    config = load_config()
    searcher = Searcher(config)
    try:
        edited = passages_of(config, str(note))
        assert any("gangplank" in t for t in edited)
        assert cached(config, searcher, edited) == set(edited)  # listed anew after the change
    finally:
        searcher.close()
    assert filling_when_edited, "the pre-fill ended before the edit: the vault is too small to test this"
    assert d.terminate()[0] == 0


def test_no_prefill_turns_it_off(vault, rag_home, daemons):
    d = daemons(rag_home, str(vault), "--debounce", "0.3", "--no-prefill")
    d.wait_ready()
    assert d.state()["passages"] is None
    status = json.loads(rag("watch", "--status", "--json").stdout)
    assert status["running"] and status.get("passages") is None
    assert "Passages:" not in rag("watch", "--status").stdout
    assert d.terminate()[0] == 0



def test_auto_leaves_the_prefill_off_with_an_embedding_server_and_on_without(tmp_path):
    """Each passage would be a request to an embedding server (a hosted one bills it): ``auto``
    does not send ten thousand of them unasked. The choice comes before any model or server."""
    from ragcli.watch.prefill import prefill_wanted, start_prefill

    home = {"RAG_HOME": str(tmp_path)}
    server = {**home, "RAG_EMBED_URL": "http://127.0.0.1:9/v1"}
    assert load_config(env=home).watch_prefill == "auto"
    assert prefill_wanted(load_config(env=home))
    assert not prefill_wanted(load_config(env=server))
    assert start_prefill(load_config(env=server), indexer=None) is None
    assert prefill_wanted(load_config(env={**server, "RAG_WATCH_PREFILL": "on"}))
    assert not prefill_wanted(load_config(env={**home, "RAG_WATCH_PREFILL": "off"}))
