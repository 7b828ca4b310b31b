"""Retrieval on PDF pages: a page is one source, so the first three places go to three pages
before a page's other chunks, which come back after them in their rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.pipeline import index
from ragcli.retrieve import Searcher

from test_ingest_pdf import make_pdf, text_page

# One page says a lot about the lamp (several chunks), two others say it once each.
LAMP = ("The lighthouse lamp needs maintenance every month: clean the lens, check the lamp "
        "bulb, oil the lamp rotation gear and log the lamp maintenance in the keeper's book.")
OTHER = ("The harbour ferry timetable changes in winter, and the fish market opens at dawn on "
         "weekdays; parking by the pier is free after six in the evening.")


@pytest.fixture(scope="module")
def report(tmp_path_factory, models_dir):
    root = tmp_path_factory.mktemp("report")
    folder = root / "docs"
    folder.mkdir()
    lines = [LAMP[i:i + 80] for i in range(0, len(LAMP), 80)]
    pages = [text_page(*(lines * 12)),  # page 1: the lamp, over and over: several chunks
             text_page(*[OTHER[:80], OTHER[80:]], "Lamp maintenance for the lighthouse is in the keeper's book."),
             text_page(*[OTHER[:80], OTHER[80:]], "The lighthouse lamp had its monthly maintenance in May."),
             text_page(OTHER[:80], OTHER[80:])]
    (folder / "keeper.pdf").write_bytes(make_pdf(pages, title="Keeper report"))
    home = root / "home"
    home.mkdir()
    config = load_config(env={"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models_dir)})
    assert not index(config, [folder]).files_failed
    return config


def test_the_first_three_places_go_to_three_pages_and_the_best_page_comes_back_after(report):
    searcher = Searcher(report)
    try:
        chunks_on_page_one = sum(h.chunk.page == 1 for h in searcher.search("lighthouse lamp maintenance", k=20))
        hits = searcher.search("lighthouse lamp maintenance", k=4)
    finally:
        searcher.close()
    assert chunks_on_page_one >= 3  # page 1 alone could fill the first three places
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert sorted(h.chunk.page for h in hits[:3]) == [1, 2, 3]
    # then page 1's next chunk, in its rank, before page 4 that never names the lamp: the
    # second half of a cut paragraph often holds the answer
    assert hits[3].chunk.page == 1


def test_a_pdf_hit_still_carries_its_page(report):
    searcher = Searcher(report)
    try:
        for mode in ("hybrid", "vector", "keyword"):
            hits = searcher.search("lighthouse lamp maintenance", k=4, mode=mode)
            assert hits and all(isinstance(h.chunk.page, int) for h in hits), mode
            assert len({h.chunk.page for h in hits[:3]}) == min(3, len(hits)), mode
    finally:
        searcher.close()
    assert Path(hits[0].chunk.path).name == "keeper.pdf"
