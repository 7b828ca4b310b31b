"""Long real PDFs, a decompression bomb and honest big streams through the PDF parser; table
questions through the real CLI.

    python bench/bench_pdfs.py [--files GLOB] [--no-pass] [--no-index] [--reports] [--before REV]

Prints, per file of ../shared/corpora/pdfs-long and ../shared/corpora/pdfs:
- pages; the largest stream decoded while reading the text and the largest stream in the
  file (images included); pages/s of pypdf's plain extraction and of ours (today also plain: the
  layout mode was held back) in this process, and the slowest page of ours;
- through the real parse worker (a fresh one per file, default settings): seconds, the
  worker's peak RSS and peak virtual size (what parse_memory_mb limits), pages skipped and
  the reason when the file fails;
then the 1 GB decompression bomb of tests/test_hostile.py and honest big content streams
(tests/test_ingest_pdf.py) through the same worker, the limits against what was measured,
and, unless --no-index, hit@5 of the 20 table questions (bench/questions/pdf_tables.jsonl):
pdfs-long indexed into a temp RAG_HOME with `rag index`, each question asked with
`rag search --json -k 5`; a hit is the expected file with the expected page (or one of
``also_pages``) among the five. With --before REV the same is done with the code at REV
(a temporary git worktree), in the same run. With --reports, the report question set
(bench/questions/reports.jsonl, issue 20) instead of the table questions: only the reports it
asks about are indexed (copied into a temp folder), each question is searched in one process
per code version (the Python Searcher, hybrid, top 3), and source hit@1 / hit@3 are printed
(a hit: the expected file with the expected page or one of ``also_pages``; "file" counts the
file alone), overall and for table and text questions. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import functools
import io
import json
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchlib import CORPORA, ROOT, drop_worktree, proc_memory, rag, rag_env, warm_models, worktree_at

sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
LONG, SHORT = CORPORA / "pdfs-long", CORPORA / "pdfs"
QUESTIONS = ROOT / "bench" / "questions" / "pdf_tables.jsonl"
REPORTS = ROOT / "bench" / "questions" / "reports.jsonl"
MB = 1 << 20


# ---------------------------------------------------------------- in this process


def in_process(path: Path) -> dict:
    """Plain vs our extraction speed, the largest decoded streams, the slowest page."""
    import pypdf
    from pypdf import filters

    def page_text(page, _sink):  # what the parser reads now: plain extraction (layout mode held back)
        return page.extract_text()

    decoded = [0]
    original = filters.decode_stream_data

    def counting(stream):
        data = original(stream)
        decoded[0] = max(decoded[0], len(data) if isinstance(data, (bytes, bytearray)) else 0)
        return data

    logging.getLogger("pypdf").setLevel(logging.ERROR)
    filters.decode_stream_data = counting
    big = dict(zlib_maximum_output_length=1 << 31, stream_decoding_work_maximum_length=1 << 33,
               stream_parsing_work_maximum_count=1 << 30, maximum_declared_stream_length=1 << 31,
               image_maximum_buffer_size=1 << 31)
    try:
        with pypdf.apply_configuration(**big):
            data = path.read_bytes()
            reader = pypdf.PdfReader(io.BytesIO(data))
            pages = len(reader.pages)
            t = time.perf_counter()
            for page in reader.pages:
                page.extract_text()
            plain_s = time.perf_counter() - t
            text_stream = decoded[0]
            reader = pypdf.PdfReader(io.BytesIO(data))
            slowest, t = 0.0, time.perf_counter()
            sink: list[str] = []
            for page in reader.pages:
                t1 = time.perf_counter()
                page_text(page, sink)
                slowest = max(slowest, time.perf_counter() - t1)
            ours_s = time.perf_counter() - t
            any_stream = _largest_stream(pypdf.PdfReader(io.BytesIO(data)))
    finally:
        filters.decode_stream_data = original
    return {"pages": pages, "plain_pps": pages / plain_s, "ours_pps": pages / ours_s, "slowest_page_s": slowest,
            "text_stream_mb": text_stream / MB, "any_stream_mb": max(any_stream, text_stream) / MB,
            "plain_s": plain_s, "ours_s": ours_s}


def _largest_stream(reader) -> int:
    from pypdf.generic import StreamObject

    largest = 0
    size = int(reader.trailer.get("/Size", 0))
    for num in range(1, size):
        try:
            obj = reader.get_object(num)
            if isinstance(obj, StreamObject):
                largest = max(largest, len(obj.get_data()))
        except Exception:  # noqa: BLE001 - a stream pypdf cannot decode (JPX, ...) says nothing about size here
            continue
    return largest


# ---------------------------------------------------------------- through the worker


def through_worker(path: Path, config, work: Path) -> dict:
    from ragcli.ingest import ParseError, Parser
    from test_ingest_pdf import make_pdf, text_page

    warm = work / "warm-up.pdf"  # in the bench's own temp dir: never beside the corpus
    warm.write_bytes(make_pdf([text_page("warm")]))
    with Parser(config) as parser:
        parser.parse(warm)  # the worker started and its imports done before the clock
        t = time.perf_counter()
        try:
            doc = parser.parse(path)
            result = {"ok": True, "sections": len(doc.sections), "rows": sum(_rows(s.text) for s in doc.sections),
                      "skipped": [w for w in doc.warnings if " skipped: " in w]}
        except ParseError as exc:
            result = {"ok": False, "reason": str(exc)}
        result["seconds"] = time.perf_counter() - t
        mem = proc_memory(parser.worker.proc.pid) if parser.worker.proc else {}
        result["peak_rss_mb"], result["peak_vm_mb"] = mem.get("VmHWM", float("nan")), mem.get("VmPeak", float("nan"))
        result["workers"] = parser.worker.started
    return result


def _rows(text: str) -> int:
    from ragcli.ingest.pdf_tables import MARKER

    return len(text.split("\n" + MARKER + "\n", 1)[1].splitlines()) if MARKER in text else 0


# ---------------------------------------------------------------- table questions


def table_hits(code: Path, label: str, work: Path) -> None:
    home = work / f"home-{label}"
    env = rag_env(home, code)
    warm_models(env)
    run = rag(["index", str(LONG), "--json"], env)
    if run.rc != 0:
        print(f"[{label}] rag index failed ({run.rc}): {run.err.decode(errors='replace')[-1500:]}")
        return
    report = run.json()
    print(f"[{label}] rag index {LONG.name}: {run.seconds:.0f}s wall, {report['files_indexed']} files, "
          f"{report['chunks_added']} chunks, failed {len(report['files_failed'])}, peak RSS {run.peak_mb:.0f} MB")
    for failure in report["files_failed"]:
        print(f"    failed: {Path(failure['path']).name}: {failure['reason']}")
    for w in report["warnings"]:
        if " skipped: " in w["warning"]:
            print(f"    warning: {Path(w['path']).name}: {w['warning']}")
    hits, lines = 0, []
    for line in QUESTIONS.read_text().splitlines():
        q = json.loads(line)
        pages = {q["page"], *q.get("also_pages", [])}
        res = rag(["search", q["question"], "--json", "-k", "5"], env)
        results = res.json()["results"] if res.rc == 0 else []
        rank = next((r["rank"] for r in results
                     if Path(r["path"]).name == q["file"] and r["page"] in pages), None)
        hits += rank is not None
        lines.append(f"    {q['id']} {'hit@' + str(rank) if rank else 'miss '} {q['file'][:40]} p{q['page']}")
    print("\n".join(lines))
    print(f"[{label}] table questions hit@5: {hits}/20")


SEARCH_ALL = """
import json, sys
from ragcli.config import load_config
from ragcli.retrieve.searcher import Searcher
searcher = Searcher(load_config())
for line in sys.stdin:
    q = json.loads(line)
    hits = searcher.search(q["question"], k=3)
    print(json.dumps([[h.chunk.path, h.chunk.page] for h in hits]), flush=True)
searcher.close()
"""


def report_hits(code: Path, label: str, work: Path, report_files: str = "*", home: Path | None = None) -> None:
    """Index the reports the question set asks about (unless ``home`` holds their index
    already), then search every question."""
    questions = [json.loads(line) for line in REPORTS.read_text().splitlines() if line.strip()]
    questions = [q for q in questions if fnmatch.fnmatch(q["file"], report_files)]
    if home is not None:
        env = rag_env(home, code)
        warm_models(env)
        print(f"[{label}] the reports' index in {home}, as it is")
    else:
        env = _index_reports(code, label, work, questions)
    if env is not None:
        _search_reports(code, label, env, questions)


def _index_reports(code: Path, label: str, work: Path, questions: list[dict]) -> dict | None:
    folder = work / f"reports-{label.split()[0]}"
    folder.mkdir(exist_ok=True)
    for name in sorted({q["file"] for q in questions}):
        shutil.copyfile(LONG / name, folder / name)
    home = work / f"home-reports-{label.split()[0]}"
    env = rag_env(home, code)
    warm_models(env)
    run = rag(["index", str(folder), "--json"], env)
    if run.rc != 0:
        print(f"[{label}] rag index failed ({run.rc}): {run.err.decode(errors='replace')[-1500:]}")
        return None
    report = run.json()
    pages = sum(len(__import__("pypdf").PdfReader(str(p)).pages) for p in folder.glob("*.pdf"))
    print(f"[{label}] rag index of the {report['files_indexed']} reports ({pages} pages): {run.seconds:.0f}s wall, "
          f"{pages / run.seconds:.1f} pages/s, {report['chunks_added']} chunks, failed {len(report['files_failed'])}, "
          f"peak RSS {run.peak_mb:.0f} MB")
    return env


def _search_reports(code: Path, label: str, env: dict, questions: list[dict]) -> None:
    """Every question searched in one process; hit@1/hit@3 overall, by kind and by half (odd
    ids tune, even ids check)."""
    import subprocess

    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", SEARCH_ALL], input="".join(json.dumps(q) + "\n" for q in questions),
                         capture_output=True, text=True, env=env, cwd=str(code))
    if out.returncode != 0:
        print(f"[{label}] search failed: {out.stderr[-1500:]}")
        return
    seconds = time.perf_counter() - t
    groups = ("all", "table", "text", "tune", "tune table", "tune text", "check", "check table", "check text")
    score = {group: [0, 0, 0, 0] for group in groups}  # questions, file@1, hit@1, hit@3
    misses = []
    for q, line in zip(questions, out.stdout.splitlines()):
        hits = [(Path(p).name, page) for p, page in json.loads(line)]
        want = {q["page"], *q.get("also_pages", [])}
        ranks = [i for i, (name, page) in enumerate(hits, 1) if name == q["file"] and page in want]
        half = "tune" if int(q["id"].rsplit("-", 1)[1]) % 2 else "check"
        for group in ("all", q["kind"], half, f"{half} {q['kind']}"):
            s = score[group]
            s[0] += 1
            s[1] += bool(hits) and hits[0][0] == q["file"]
            s[2] += bool(ranks) and ranks[0] == 1
            s[3] += bool(ranks)
        if not ranks:
            misses.append(f"{q['id']} (want {Path(q['file']).stem[-24:]} p{q['page']}, got "
                          f"{', '.join(f'{Path(n).stem[-24:]} p{p}' for n, p in hits)})")
    for kind, (n, file1, hit1, hit3) in score.items():
        print(f"[{label}] {kind:11s} questions {n:3d}: file@1 {file1 / n:.2f}  hit@1 {hit1 / n:.2f}  "
              f"hit@3 {hit3 / n:.2f}")
    print(f"[{label}] {len(questions)} searches in {seconds:.1f}s (one process); missed at 3: " + "; ".join(misses))


def audit_pages(home: Path) -> None:
    """For each report question, the pages of its file beyond ``page`` and ``also_pages`` that
    hold every one of its key figures (``facts``), read from the index in ``home``: candidates
    for ``also_pages``, to be read by eye (a figure alone, "65" or "FY 2023", is on many pages
    that do not answer)."""
    import sqlite3
    from collections import defaultdict

    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    pages: dict[tuple[str, int], list[str]] = defaultdict(list)
    for path, page, text in db.execute("SELECT path, page, text FROM chunks WHERE page IS NOT NULL ORDER BY ordinal"):
        pages[(Path(path).name, page)].append(text)
    db.close()
    for line in REPORTS.read_text().splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        labelled = {q["page"], *q.get("also_pages", [])}
        other = sorted(page for (name, page), texts in pages.items() if name == q["file"] and page not in labelled
                       and all(fact in " ".join(texts) for fact in q["facts"]))
        if other:
            print(f"{q['id']} ({q['kind']}, facts {q['facts']}): labelled {sorted(labelled)}; "
                  f"every fact also on {other}")


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="*.pdf", help="only files matching this glob")
    ap.add_argument("--no-pass", action="store_true", help="skip the per-file passes")
    ap.add_argument("--no-index", action="store_true", help="skip indexing and the table questions")
    ap.add_argument("--reports", action="store_true",
                    help="the report question set (bench/questions/reports.jsonl) instead of the table questions")
    ap.add_argument("--report-files", default="*",
                    help="with --reports: only the questions on reports matching this glob (a shorter run)")
    ap.add_argument("--reports-home", type=Path,
                    help="with --reports: search the reports' index in this RAG_HOME as it is (no indexing), "
                         "e.g. what bench_answers2.py built under --homes (HOMES/shared/reports)")
    ap.add_argument("--audit-pages", action="store_true",
                    help="with --reports-home: only list the other pages that hold every key figure of a question")
    ap.add_argument("--no-hostile", action="store_true", help="skip the bomb and the honest big streams")
    ap.add_argument("--before", help="also index with the code at this git revision")
    opts = ap.parse_args()
    if opts.audit_pages and opts.reports_home:
        return audit_pages(opts.reports_home)

    import pypdf

    from ragcli.config import load_config
    from ragcli.ingest.pdf import PdfLimits
    from test_hostile import bomb_pdf
    from test_ingest_pdf import honest_big_stream

    work = Path(tempfile.mkdtemp(prefix="ragcli-bench-pdfs-"))
    config = dataclasses.replace(load_config(env={"RAG_HOME": str(work / "cfg")}))
    limits = PdfLimits(config.parse_memory_mb, config.parse_timeout)
    print(f"pypdf {pypdf.__version__}; settings: parse_timeout {config.parse_timeout:g}s per page, "
          f"parse_memory_mb {config.parse_memory_mb} -> streams up to {limits.stream_bytes // MB} MB and "
          f"{limits.stream_tokens:,} tokens (pypdf's defaults: 75 MB, 2,000,000), max_file_mb {config.max_file_mb}")
    files = sorted(LONG.glob(opts.files)) + sorted(SHORT.glob(opts.files))
    worst = {"text_stream_mb": 0.0, "any_stream_mb": 0.0, "peak_vm_mb": 0.0, "peak_rss_mb": 0.0,
             "slowest_page_s": 0.0}
    if not opts.no_pass:
        total = {"pages": 0, "plain_s": 0.0, "ours_s": 0.0, "worker_s": 0.0, "refused": 0, "skipped": 0, "rows": 0}
        print(f"\n{'file':46s} {'pages':>5s} {'text MB':>7s} {'any MB':>7s} {'plain p/s':>9s} "
              f"{'ours p/s':>8s} {'slowest':>7s} {'worker s':>8s} {'RSS MB':>6s} {'VM MB':>6s}  outcome")
        for path in files:
            try:
                m = in_process(path)
            except Exception as exc:  # noqa: BLE001 - tricky files: their outcome is the worker's line
                m = {"pages": 0, "plain_pps": 0, "ours_pps": 0, "slowest_page_s": 0, "text_stream_mb": 0,
                     "any_stream_mb": 0, "plain_s": 0, "ours_s": 0, "error": type(exc).__name__}
            w = through_worker(path, config, work)
            for key in ("text_stream_mb", "any_stream_mb", "slowest_page_s"):
                worst[key] = max(worst[key], m[key])
            for key in ("peak_vm_mb", "peak_rss_mb"):
                worst[key] = max(worst[key], w[key])
            total["pages"] += m["pages"]
            total["plain_s"] += m["plain_s"]
            total["ours_s"] += m["ours_s"]
            total["worker_s"] += w["seconds"]
            total["refused"] += not w["ok"]
            total["skipped"] += len(w.get("skipped", []))
            total["rows"] += w.get("rows", 0)
            outcome = (f"ok, {w['sections']} pages with text, {w['rows']} table rows"
                       + (f", {len(w['skipped'])} skipped: {w['skipped'][:2]}" if w["skipped"] else "")) \
                if w["ok"] else w["reason"]
            print(f"{path.name[:46]:46s} {m['pages']:5d} {m['text_stream_mb']:7.2f} {m['any_stream_mb']:7.2f} "
                  f"{m['plain_pps']:9.1f} {m['ours_pps']:8.1f} {m['slowest_page_s']:6.2f}s {w['seconds']:8.1f} "
                  f"{w['peak_rss_mb']:6.0f} {w['peak_vm_mb']:6.0f}  {outcome[:150]}", flush=True)
        print(f"{'all':46s} {total['pages']:5d} {worst['text_stream_mb']:7.2f} {worst['any_stream_mb']:7.2f} "
              f"{total['pages'] / max(total['plain_s'], 1e-9):9.1f} {total['pages'] / max(total['ours_s'], 1e-9):8.1f} "
              f"{worst['slowest_page_s']:6.2f}s {total['worker_s']:8.1f} {worst['peak_rss_mb']:6.0f} "
              f"{worst['peak_vm_mb']:6.0f}  (worker: {total['pages'] / max(total['worker_s'], 1e-9):.1f} pages/s)")
        print(f"files refused {total['refused']} of {len(files)} (the tricky ones are meant to be), pages skipped "
              f"{total['skipped']} (warnings, at most {5} a file are kept), table rows read {total['rows']:,}")

    cases = [] if opts.no_hostile else [
        ("1 GB decompression bomb (tests/test_hostile.bomb_pdf)", lambda: bomb_pdf(1024)),
        ("honest 80 MB content stream (inline scan)", lambda: honest_big_stream(80)),
        ("honest 200 MB content stream (inline scan)", lambda: honest_big_stream(200))]
    if cases:
        print("\nhostile and honest big streams, through the worker with the default settings:")
    for name, build in cases:
        path = work / "case.pdf"
        path.write_bytes(build())
        w = through_worker(path, config, work)
        outcome = f"indexed ({w['sections']} page)" if w["ok"] else w["reason"]
        print(f"  {name}: file {path.stat().st_size / MB:.1f} MB -> {outcome[:170]}; {w['seconds']:.1f}s, "
              f"worker peak RSS {w['peak_rss_mb']:.0f} MB, VM {w['peak_vm_mb']:.0f} MB")
    if not opts.no_pass:
        print(f"\nlimits against the real files: stream limit {limits.stream_bytes // MB} MB = "
              f"{limits.stream_bytes / MB / max(worst['text_stream_mb'], 1e-9):.0f}x the largest stream read for text "
              f"({worst['text_stream_mb']:.2f} MB), "
              f"{limits.stream_bytes / MB / max(worst['any_stream_mb'], 1e-9):.0f}x "
              f"the largest stream of any kind ({worst['any_stream_mb']:.2f} MB); memory limit "
              f"{config.parse_memory_mb} MB = {config.parse_memory_mb / max(worst['peak_vm_mb'], 1e-9):.1f}x the "
              f"largest worker peak VM ({worst['peak_vm_mb']:.0f} MB); page timeout {config.parse_timeout:g}s = "
              f"{config.parse_timeout / max(worst['slowest_page_s'], 1e-9):.0f}x the slowest page "
              f"({worst['slowest_page_s']:.2f}s)")
    if not opts.no_index:
        print()
        hits = (functools.partial(report_hits, report_files=opts.report_files, home=opts.reports_home)
                if opts.reports else table_hits)
        if opts.before:
            before = worktree_at(opts.before)
            try:
                hits(before, f"before {opts.before}", work)
            finally:
                drop_worktree(before)
        hits(ROOT, "now", work)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
