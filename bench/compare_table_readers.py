"""Today's table reader (pypdf internals: pdf_positions + pdf_tables) against pdfplumber's
public character positions and table finder, on the pages of the table questions (issue 20).

    python bench/compare_table_readers.py [--reader ours|pdfplumber]

Without --reader, each reader runs in its own child process (so its peak RSS is its own) on
the page of every question of bench/questions/pdf_tables.jsonl. Printed per reader: rows
read, pages/s, peak RSS, "figure in a row": questions whose page gave a row holding the
answer figure, and "with its label": such a row that also holds most words (60%) of the row
label (the check the question set was written for; not checked by eye).
pdfplumber is not a dependency: pip install pdfplumber to run it. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from benchlib import CORPORA, ROOT

sys.path[:0] = [str(ROOT)]
QUESTIONS = ROOT / "bench" / "questions" / "pdf_tables.jsonl"


def ours(path: Path, pages: list[int]) -> dict[int, list[str]]:
    import pypdf

    from ragcli.ingest import pdf_positions, pdf_tables

    reader = pypdf.PdfReader(str(path))
    return {n: pdf_tables.rows_in_lines(pdf_positions.page_lines(reader.pages[n - 1])) for n in pages}


def plumber(path: Path, pages: list[int]) -> dict[int, list[str]]:
    import pdfplumber

    out = {}
    with pdfplumber.open(str(path)) as pdf:
        for n in pages:
            page = pdf.pages[n - 1]
            rows = []
            for settings in ({}, {"vertical_strategy": "text", "horizontal_strategy": "text"}):
                for table in page.extract_tables(settings):
                    rows += [" | ".join(c or "" for c in row) for row in table if any(row)]
                if rows:  # ruled tables first; only pages without them are read by text alignment
                    break
            out[n] = rows
    return out


def run(reader: str) -> None:
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    logging.getLogger("pdfminer").setLevel(logging.CRITICAL)
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    by_file: dict[str, list[int]] = {}
    for q in questions:
        by_file.setdefault(q["file"], []).append(q["page"])
    read = ours if reader == "ours" else plumber
    rows: dict[tuple[str, int], list[str]] = {}
    t = time.perf_counter()
    for name, pages in by_file.items():
        for n, found in read(CORPORA / "pdfs-long" / name, sorted(set(pages))).items():
            rows[(name, n)] = found
    seconds = time.perf_counter() - t
    right = sum(_holds(rows[(q["file"], q["page"])], q) for q in questions)
    figure = sum(any(q["answer"].lower() in r.lower() for r in rows[(q["file"], q["page"])]) for q in questions)
    print(json.dumps({"reader": reader, "pages": len(rows), "rows": sum(map(len, rows.values())),
                      "right": right, "figure": figure, "questions": len(questions), "seconds": seconds,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _holds(rows: list[str], q: dict) -> bool:
    words = [w for w in re.findall(r"\w+", q["row"].lower()) if len(w) > 2]
    for row in rows:
        flat = " ".join(row.lower().split())
        if q["answer"].lower() in flat and sum(w in flat for w in words) >= max(1, len(words) * 0.6):
            return True
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", choices=("ours", "pdfplumber"))
    opts = ap.parse_args()
    if opts.reader:
        run(opts.reader)
        return
    import pypdf

    print(f"pypdf {pypdf.__version__}; pages of {QUESTIONS.name}, one child process per reader")
    for reader in ("ours", "pdfplumber"):
        out = subprocess.run([sys.executable, __file__, "--reader", reader], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"  {reader}: failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  {reader:10s} rows {r['rows']:5d} on {r['pages']} pages; "
              f"figure in a row {r['figure']}/{r['questions']}, "
              f"with its label {r['right']}/{r['questions']}; "
              f"{r['pages'] / r['seconds']:.2f} pages/s; peak RSS {r['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
