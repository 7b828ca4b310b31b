"""Retrieval on PDF pages: a page is one source, so the first three places go to three pages
before a page's other chunks, which come back after them in their rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.pipeline import index
from ragcli.retrieve import Searcher, fuse_convex

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


def test_page_chunks_keep_their_keyword_order_past_the_scale_and_notes_keep_the_cut():
    """Every chunk of a report carries its title and what it is about, so a question naming
    the report passes "every query term once" on most of its pages; cut at 1, only cosines
    ordered them. A page's bm25 is divided by the best page's instead; a note's keeps the cut."""
    vec = {"p1": 0.80, "p2": 0.79, "n1": 0.80, "n2": 0.79, "low": 0.10}
    kw = {"p1": 30.0, "p2": 40.0, "n1": 30.0, "n2": 40.0, "low": 0.0}  # scale 20: all four pass it
    cut = dict(fuse_convex(vec, kw, alpha=0.5, keyword_scale=20.0))
    assert cut["p1"] > cut["p2"] and cut["n1"] > cut["n2"]  # cut at 1: the cosines alone decide
    pages = dict(fuse_convex(vec, kw, alpha=0.5, keyword_scale=20.0, on_pages=frozenset({"p1", "p2"})))
    assert pages["p2"] > pages["p1"]  # 40 over 30 still counts on a page
    assert pages["n1"] == pytest.approx(cut["n1"]) and pages["n2"] == pytest.approx(cut["n2"])
    assert pages["p2"] == pytest.approx(pages["n2"])  # the best page scores 1, as a note at the cut
    # below the scale, a page's bm25 counts as a note's does
    under = {c: s / 4 for c, s in kw.items()}
    assert dict(fuse_convex(vec, under, alpha=0.5, keyword_scale=20.0, on_pages=frozenset({"p1", "p2"}))) == \
        pytest.approx(dict(fuse_convex(vec, under, alpha=0.5, keyword_scale=20.0)))


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
