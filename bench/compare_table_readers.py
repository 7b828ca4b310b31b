"""The table reader of pypdf internals (main before issue 20's rows: pdf_positions +
pdf_tables, run from a checkout of that code) against today's pdfplumber reader
(pdf_plumber.PageTables: ruled tables from their drawn cells, other tables from word
positions), on a tune set and a check set of pages.

    python bench/compare_table_readers.py [--old-root PATH] [--reader old|new --root PATH --set NAME]

- tune: the page of each of the 20 questions of bench/questions/pdf_tables.jsonl (pdfs-long);
  the pdfplumber reader's rules were written looking at these pages;
- check: the pages of the table questions of bench/questions/reports.jsonl that are not tune
  pages (pages never looked at while writing the rules), and the four papers of
  ../shared/corpora/pdfs (every page: rows read on prose are noise).

Each reader runs in its own child process per set (so its peak RSS is its own), on the
pages alone (the old reader on every page asked, as if no gate: its probe schedule is not
run; the new one also reads the page before each, unscored, as a table may continue it).
Printed per reader and set: rows read, pages/s, peak RSS, "figure in a row": questions
whose page gave a row holding the answer figure (for reports.jsonl: one of its key figures),
and "with its label" (tune set only): such a row that also holds most words (60%) of the row
label. Rows are not checked by eye here. Asserts nothing.

--old-root defaults to a worktree of main at /work/wt-base20 (git worktree add --detach
/work/wt-base20 main) when present; the old reader exists only there.
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

TUNE = ROOT / "bench" / "questions" / "pdf_tables.jsonl"
REPORTS = ROOT / "bench" / "questions" / "reports.jsonl"
OLD_ROOT = Path("/work/wt-base20")


def old(path: Path, pages: list[int]) -> dict[int, list[str]]:
    import pypdf

    from ragcli.ingest import pdf_positions, pdf_tables

    reader = pypdf.PdfReader(str(path))
    out = {}
    for n in pages:
        try:
            out[n] = pdf_tables.rows_in_lines(pdf_positions.page_lines(reader.pages[n - 1]))
        except Exception:  # noqa: BLE001 - a page the reader cannot read gives no rows
            out[n] = []
    return out


def new(path: Path, pages: list[int]) -> dict[int, list[str]]:
    """As parse_pdf reads them: pypdf's plain text and content decide, pdfplumber reads."""
    import pypdf

    from ragcli.ingest.pdf_plumber import PageTables

    data = path.read_bytes()
    reader = pypdf.PdfReader(str(path))
    tables = PageTables(data)
    out = {}
    for n in pages:
        for m in (n - 1, n) if n > 1 and n - 1 not in out else (n,):  # the page before: a table it continues
            page = reader.pages[m - 1]
            contents = page.get_contents()
            rows = tables.rows(m, page.extract_text() or "", contents.get_data() if contents is not None else b"")
            if m in pages:
                out[m] = rows
    tables.close()
    return out


def questions(name: str) -> list[dict]:
    tune = [json.loads(line) for line in TUNE.read_text().splitlines() if line.strip()]
    if name == "tune":
        return tune
    seen = {(q["file"], q["page"]) for q in tune}
    reports = [json.loads(line) for line in REPORTS.read_text().splitlines() if line.strip()]
    return [q for q in reports if q["kind"] == "table" and (q["file"], q["page"]) not in seen]


def run(reader: str, name: str) -> None:
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    logging.getLogger("pdfminer").setLevel(logging.CRITICAL)
    read = old if reader == "old" else new
    asked = questions(name)
    by_file: dict[Path, set[int]] = {}
    for q in asked:
        by_file.setdefault(CORPORA / "pdfs-long" / q["file"], set()).add(q["page"])
    if name == "check":
        import pypdf

        for paper in sorted((CORPORA / "pdfs").glob("[0-9]*.pdf")):
            by_file[paper] = set(range(1, len(pypdf.PdfReader(str(paper)).pages) + 1))
    rows: dict[tuple[str, int], list[str]] = {}
    t = time.perf_counter()
    for path, pages in by_file.items():
        for n, found in read(path, sorted(pages)).items():
            rows[(path.name, n)] = found
    seconds = time.perf_counter() - t
    figures = [q.get("facts") or [q["answer"]] for q in asked]
    figure = sum(any(f.lower() in r.lower() for f in fs for r in rows[(q["file"], q["page"])])
                 for q, fs in zip(asked, figures))
    right = sum(_holds(rows[(q["file"], q["page"])], q) for q in asked if "row" in q)
    papers = sum(len(v) for (f, _), v in rows.items() if f[0].isdigit())
    print(json.dumps({"reader": reader, "set": name, "pages": len(rows), "rows": sum(map(len, rows.values())),
                      "paper_rows": papers, "right": right, "figure": figure, "questions": len(asked),
                      "seconds": seconds, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _holds(rows: list[str], q: dict) -> bool:
    words = [w for w in re.findall(r"\w+", q["row"].lower()) if len(w) > 2]
    for row in rows:
        flat = " ".join(row.lower().split())
        if q["answer"].lower() in flat and sum(w in flat for w in words) >= max(1, len(words) * 0.6):
            return True
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reader", choices=("old", "new"))
    ap.add_argument("--set", choices=("tune", "check"), default="tune")
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--old-root", type=Path, default=OLD_ROOT)
    opts = ap.parse_args()
    if opts.reader:
        sys.path[:0] = [str(opts.root)]
        run(opts.reader, opts.set)
        return
    import pypdf

    print(f"pypdf {pypdf.__version__}; one child process per reader and set; old reader from {opts.old_root}")
    for name in ("tune", "check"):
        for reader, root in (("old", opts.old_root), ("new", ROOT)):
            out = subprocess.run([sys.executable, __file__, "--reader", reader, "--set", name, "--root", str(root)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"  {name} {reader}: failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            label = f", with its label {r['right']}/{r['questions']}" if name == "tune" else ""
            papers = f" ({r['paper_rows']} on the papers)" if name == "check" else ""
            print(f"  {name:5s} {reader:3s} rows {r['rows']:5d}{papers} on {r['pages']} pages; "
                  f"figure in a row {r['figure']}/{r['questions']}{label}; "
                  f"{r['pages'] / r['seconds']:.2f} pages/s; peak RSS {r['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
