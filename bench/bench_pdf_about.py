"""What each real PDF is said to be about (ragcli/ingest/pdf_about.py), on the two halves of
the shelf: the rules were tuned on the "tune" half and are checked, unchanged, on the other.

    python bench/bench_pdf_about.py [--pages N]

The shelf is ../shared/corpora/pdfs-long (sorted by name: even positions tune, odd check)
and ../shared/corpora/pdfs (all check). Each file's metadata and its first N pages (default
40: enough for the running headers) are read with pypdf's plain extraction, and the context
line, period end and tags are printed for judging by eye. Asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
from pathlib import Path

from benchlib import CORPORA, ROOT

sys.path[:0] = [str(ROOT)]


def about_of(path: Path, pages: int):
    import pypdf

    from ragcli.ingest.pdf import _metadata
    from ragcli.ingest.pdf_about import read_about

    reader = pypdf.PdfReader(io.BytesIO(path.read_bytes()), strict=False)
    if reader.is_encrypted:
        reader.decrypt("")
    texts = [(page.extract_text() or "") for page in list(reader.pages)[:pages]]
    return read_about(path.stem, _metadata(reader), texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=40)
    opts = ap.parse_args()
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)
    long = sorted((CORPORA / "pdfs-long").glob("*.pdf"))
    halves = {"tune": long[0::2], "check": long[1::2] + sorted((CORPORA / "pdfs").glob("*.pdf"))}
    for half, files in halves.items():
        print(f"\n== {half} ({len(files)} files)")
        for path in files:
            try:
                about = about_of(path, opts.pages)
            except Exception as exc:  # noqa: BLE001 - encrypted or damaged test files
                print(f"  {path.name[:44]:44s} unreadable ({type(exc).__name__})")
                continue
            print(f"  {path.name[:44]:44s} {about.line() or '-'}  | end {about.period_end or '-'} | "
                  f"tags {','.join(about.tags()) or '-'}", flush=True)


if __name__ == "__main__":
    main()
