"""Typeset PDFs' ligatures ("ﬁ", "ﬂ", one glyph for two letters): can a reader find the page
by the words they read on it? Known-item search over the four papers of ../shared/corpora/pdfs,
for this checkout and, in the same run, a baseline checkout (each indexes the papers itself).

    python bench/bench_ligatures.py --baseline /tmp/wt-base [--n 60] [--seed 7]

Items: ``--n`` sentences of the papers that hold a ligature, drawn with ``--seed``; the query is
the word that held it, the word before and the two after, as the reader would type them ("text
classification problems such"). Figure: items whose page is among the top 5 of `rag search`, by
mode. Prints, never asserts.

Session 23, against 65d0dee (before the ligatures were read as letters), 60 items, seed 7:
keyword 47 -> 60, hybrid 48 -> 59, vector 30 -> 30 (`--baseline` a worktree at 65d0dee).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "corpora" / "pdfs"
sys.path.insert(0, str(ROOT))
from ragcli.words import LIGATURES  # noqa: E402
MODES = ("keyword", "vector", "hybrid")


def items(n: int, seed: int) -> list[tuple[str, int, str]]:
    """(file, page, query) for sentences holding a ligature, as the page prints them."""
    import pypdf

    found = []
    for path in sorted(PAPERS.glob("[12]*.pdf")):
        for page_no, page in enumerate(pypdf.PdfReader(path).pages, 1):
            text = (page.extract_text() or "").replace("-\n", "").replace("\n", " ")
            for sentence in re.split(r"(?<=[.?!])\s+", text):
                words = sentence.split()
                at = next((i for i, w in enumerate(words) if any(0xFB00 <= ord(c) <= 0xFB04 for c in w)), None)
                if at is not None and 8 <= len(words) <= 30:
                    query = " ".join(words[max(0, at - 1):at + 3]).translate(LIGATURES)
                    found.append((path.name, page_no, query))
    random.Random(seed).shuffle(found)
    return found[:n]


def run(code: Path, notes: Path, work: Path, asked: list) -> dict[str, int]:
    # run from the checkout: `python -m` puts the working folder first on the path
    env = {**os.environ, "PYTHONPATH": str(code), "RAG_HOME": str(work), "RAG_DAEMON": "off"}
    subprocess.run([sys.executable, "-m", "ragcli.cli", "index", str(notes)], env=env, check=True, cwd=code,
                   capture_output=True)
    found = {}
    for mode in MODES:
        hits = 0
        for name, page, query in asked:
            out = subprocess.run([sys.executable, "-m", "ragcli.cli", "search", "--json", "-k", "5", "--mode",
                                  mode, query], env=env, check=True, capture_output=True, text=True,
                             cwd=code).stdout
            hits += any(r["path"].endswith(name) and r["page"] == page for r in json.loads(out)["results"])
        found[mode] = hits
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout to compare with")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    asked = items(args.n, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        notes = Path(tmp) / "papers"
        notes.mkdir()
        for path in PAPERS.glob("[12]*.pdf"):
            shutil.copy(path, notes)
        rows = {label: run(code, notes, Path(tmp) / label, asked)
                for label, code in (("baseline", args.baseline), ("this", ROOT))}
    print(f"{len(asked)} items: page in the top 5 of `rag search`")
    print("| mode | baseline | this |\n|---|---|---|")
    for mode in MODES:
        print(f"| {mode} | {rows['baseline'][mode]} | {rows['this'][mode]} |")


if __name__ == "__main__":
    main()
