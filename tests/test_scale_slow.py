"""Opt-in, slow: a large part of the MDN corpus (../shared/corpora/mdn) through the real CLI.

Marked slow: runs only with `-m slow` (and when ../shared is present): embedding runs at roughly
10 chunks/s on two cores, and MDN holds about 13 chunks a note. RAG_SLOW_MDN_LIMIT sets how
many notes (the first N by path, default 1000, about half an hour here; 0 = all 14,235).
Checks that the counts agree everywhere, a search finds its page, an edited note is
re-indexed alone and found, and `rag verify` passes. bench/bench_scale.py measures the same
ground with figures.

Embedding all of MDN takes over an hour here. RAG_SLOW_MDN_VECTORS_FROM=HOME (the RAG_HOME of
an earlier full run, e.g. bench_scale's ``--keep DIR``/home) seeds the new index's vector
cache with that run's vectors (the same model; keyed by chunk text and model), so the run
embeds only what the cache lacks and everything else (walk, parse, chunk, keyword index,
Chroma, search, edit, verify) is exercised at full size in minutes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import CORPORA
from helpers import ok, rag, seed_vector_cache

MDN = CORPORA / "mdn"
QUESTIONS = Path(__file__).resolve().parents[1] / "bench" / "questions" / "mdn.jsonl"
LIMIT = int(os.environ.get("RAG_SLOW_MDN_LIMIT", "1000") or 0)
VECTORS_FROM = os.environ.get("RAG_SLOW_MDN_VECTORS_FROM")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not MDN.is_dir(), reason="../shared/corpora/mdn is not present"),
]


def _json(proc) -> dict:
    return json.loads(ok(proc).stdout)


def test_mdn_at_scale(tmp_path: Path) -> None:
    paths = sorted(str(p.relative_to(MDN)) for p in (MDN / "files").rglob("index.md"))
    paths = paths[:LIMIT] if LIMIT else paths
    notes = tmp_path / "mdn"
    for rel in paths:
        (notes / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(MDN / rel, notes / rel)
    home = tmp_path / "home"
    timeout = 20 * 3600
    if VECTORS_FROM:
        (tmp_path / "empty").mkdir()
        ok(rag("index", tmp_path / "empty", "--json", home=home))  # a new index to seed
        seed_vector_cache(home, Path(VECTORS_FROM))

    report = _json(rag("index", notes, "--json", home=home, timeout=timeout))
    assert report["files_indexed"] == len(paths) and report["files_failed"] == []
    assert report["chunks_added"] > 3 * len(paths)
    assert report["embedded"] == report["chunks_added"] or VECTORS_FROM
    status = _json(rag("status", "--json", home=home))
    assert (status["files"], status["chunks"]) == (len(paths), report["chunks_added"])

    # A title term finds its page first; the questions whose page is here find it in the top 5.
    first = notes / paths[0]
    title = next(ln.split(":", 1)[1].strip() for ln in first.read_text().splitlines() if ln.startswith("title:"))
    hits = _json(rag("search", title, "--mode", "keyword", "--json", "-k", "5", home=home))["results"]
    assert hits and hits[0]["path"] == str(first)
    wanted = set(paths)
    asked = [q for q in map(json.loads, QUESTIONS.read_text().splitlines()) if {q["path"], *q["also"]} & wanted]
    found = 0
    for q in asked:
        results = _json(rag("search", q["question"], "--json", "-k", "5", home=home))["results"]
        found += any(os.path.relpath(r["path"], notes) in {q["path"], *q["also"]} for r in results)
    assert not asked or found >= 0.6 * len(asked), f"{found} of {len(asked)} questions found their page"

    # One edited note: only it is indexed again, and its new words are found in it.
    edited = notes / paths[len(paths) // 2]
    with edited.open("a", encoding="utf-8") as fh:
        fh.write("\n\n## Slow test\n\nThe axolotlquasar lives only in this paragraph.\n")
    again = _json(rag("index", "--json", home=home, timeout=timeout))
    assert (again["files_indexed"], again["files_unchanged"]) == (1, len(paths) - 1)
    assert again["embedded"] <= 3  # the new paragraph's chunk(s); the rest come from the cache
    hits = _json(rag("search", "axolotlquasar", "--mode", "keyword", "--json", home=home))["results"]
    assert [h["path"] for h in hits] == [str(edited)]

    verify = rag("verify", "--json", home=home, timeout=timeout)
    assert verify.returncode == 0 and json.loads(verify.stdout)["ok"] is True

