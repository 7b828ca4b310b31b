"""ragcli at scale: the MDN corpus (14,235 notes, ../shared/corpora/mdn) through the real CLI.

    python bench/bench_scale.py [--limit N] [--interrupt-limit N] [--queries 100] [--skip PHASES]
                                [--chroma-server]

``--limit N`` indexes only the first N notes by sorted path, plus the pages the questions of
bench/questions/mdn.jsonl are about (so hit@5 is measured at every size; --no-question-pages
leaves them out); without it, all of them (a long run: start it with nice -n 19). The notes
are copied into a temp folder, so one can be edited. Phases,
each printed as it finishes (``--skip`` takes a comma list of their names):

- ``first``: a first `rag index` of the notes: wall time, chunks/s overall and per 1,000
  chunks (the manifest is polled once a second), peak RSS of every process (rag and its
  parse worker, from /proc while running and wait4 at the end), index size on disk per
  chunk; and, as the baseline in the same run, the Obsidian help vault indexed the same way
  (the ratio of the two chunks/s: the target is within 10%);
- ``again``: an unchanged re-index (a new process; target < 2 s), then one note edited and
  indexed again (target < 2 s);
- ``search``: `rag search` latency p50/p95 over ``--queries`` varied queries, each a new
  process, and warm (one long-lived Searcher in this process); hit@5 of keyword, vector and
  hybrid on bench/questions/mdn.jsonl (questions whose page is within the notes indexed);
- ``verify``: `rag verify` time and peak RSS;
- ``watch``: `rag watch` start-up (to the end of its start-up reconcile), idle RSS and idle
  CPU over 30 s; then the same with the inotify limit lowered to 8,192 watches in a user
  namespace (MDN has 14,238 folders), so the watcher falls back to polling;
- ``interrupt``: the first ``--interrupt-limit`` notes indexed three times in fresh homes:
  uninterrupted, then Ctrl-C (SIGINT) at ~50% and `rag index` again, then kill -9 at ~50%
  and again: vectors kept at the stop + vectors embedded by the resume against the
  uninterrupted run's (anything over it was embedded twice), and total time;
- ``twophase`` (bench/scale_twophase.py): a fresh `rag index` polled from outside: when a
  keyword search finds the note indexed last, when every vector is in, phase two's chunks/s
  against the help vault's, peak RSS, hit@5 at 10%, 50% and 100% of the vectors. Alone:
  ``--skip first,again,search,verify,watch,interrupt``.

``--vectors-from HOME`` fills the new index's vector cache from an earlier run's index of the
same notes, so the first index embeds nothing: with and without ``--chroma-server``, two
such runs compare the stores on the whole corpus without hours of embedding twice.

``--chroma-server`` runs every phase against a local `chroma run` on loopback
(RAG_CHROMA_URL) instead of the embedded store, and prints the server's peak RSS at the end:
run the bench twice, with and without it, for the two columns.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchlib import (CORPORA, ROOT, children, cpu_seconds, drop_page_cache, finish, proc_memory, rag, rag_env,
                      rag_popen,
                      warm_models)

sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from helpers import seed_vector_cache  # noqa: E402 - tests/ is on the path from the line above
MDN = CORPORA / "mdn"
VAULT = CORPORA / "obsidian-help" / "en"
QUESTIONS = ROOT / "bench" / "questions" / "mdn.jsonl"
PHASES = ("first", "again", "search", "verify", "watch", "interrupt", "twophase")


def note_paths(limit: int | None, with_questions: bool = False) -> list[str]:
    """Paths of the notes relative to the corpus root, sorted; the first ``limit`` of them,
    plus (``with_questions``) the pages the MDN questions are about, so hit@5 means
    something at any size."""
    found = sorted(str(p.relative_to(MDN)) for p in (MDN / "files").rglob("index.md"))
    if not limit:
        return found
    chosen = set(found[:limit])
    if with_questions:
        for line in QUESTIONS.read_text().splitlines():
            q = json.loads(line)
            chosen.update([q["path"], *q["also"]])
    return sorted(chosen)


def copy_notes(paths: list[str], dest: Path) -> None:
    for rel in paths:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(MDN / rel, target)


class Watcher:
    """Polls a running `rag index`: chunks committed over time, peak RSS of each process."""

    def __init__(self, proc, home: Path, interval: float = 1.0):
        self.proc, self.db_path, self.interval = proc, home / "index" / "manifest.sqlite", interval
        self.samples: list[tuple[float, int]] = []  # (seconds since start, chunks committed)
        self.peaks: dict[int, tuple[str, float]] = {}  # pid -> (role, peak RSS MB)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def chunks(self) -> int:
        if not self.db_path.exists():
            return 0
        try:
            db = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5)
            try:
                return db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:
            return self.samples[-1][1] if self.samples else 0

    def _run(self) -> None:
        while not self.stop.is_set() and self.proc.poll() is None:
            self.samples.append((time.monotonic() - self.proc.started_at, self.chunks()))
            for pid, role in [(self.proc.pid, "rag")] + [(c, "worker") for c in children(self.proc.pid)]:
                peak = proc_memory(pid).get("VmHWM")
                if peak:
                    self.peaks[pid] = (role, max(peak, self.peaks.get(pid, (role, 0.0))[1]))
            self.stop.wait(self.interval)

    def done(self) -> None:
        self.stop.set()
        self.thread.join()

    def per_thousand(self, total: int) -> list[str]:
        """chunks/s within each window of 1,000 chunks (from the polled counts)."""
        out, last_t, last_n = [], 0.0, 0
        marks = list(range(1000, total + 1, 1000))
        for mark in marks:
            hit = next(((t, n) for t, n in self.samples if n >= mark), None)
            if hit is None:
                break
            t, n = hit
            if t > last_t:
                out.append(f"{mark // 1000}k:{(n - last_n) / (t - last_t):.1f}")
            last_t, last_n = t, n
        return out


def mean_tokens(home: Path) -> float:
    """Mean model tokens per embedded chunk text (chunks/s depends on it: MDN's chunks are
    fuller than the help vault's, so tokens/s is the like-for-like speed)."""
    from ragcli.config import load_config
    from ragcli.embed import make_embedder
    from ragcli.types import Chunk

    db = sqlite3.connect(f"file:{home / 'index' / 'manifest.sqlite'}?mode=ro", uri=True)
    rows = db.execute("SELECT title, heading, text FROM chunks").fetchall()
    db.close()
    embedder = make_embedder(load_config(env=rag_env(home)))
    try:
        counts = [embedder.count_tokens(Chunk("", "", t, h, x, 0, 0).embed_text()) for t, h, x in rows]
    finally:
        embedder.close()
    return sum(counts) / max(len(counts), 1)


def index_run(folder: Path, home: Path, label: str, args: tuple = ()) -> dict:
    env = rag_env(home)
    proc = rag_popen(["index", str(folder), "--json", *args], env)
    watcher = Watcher(proc, home)
    run = finish(proc)
    watcher.done()
    if run.rc != 0:
        print(f"[{label}] rag index failed ({run.rc}): {run.err.decode(errors='replace')[-2000:]}")
        return {}
    report = run.json()
    chunks = report["chunks_added"]
    size = sum(f.stat().st_size for f in (home / "index").rglob("*") if f.is_file())
    peaks = ", ".join(f"{role} {mb:.0f} MB" for role, mb in sorted(watcher.peaks.values()))
    print(f"[{label}] {report['files_indexed']} files, {chunks} chunks, {report['embedded']} embedded, "
          f"{len(report['files_failed'])} failed: {run.seconds:.1f}s wall -> {chunks / run.seconds:.2f} chunks/s, "
          f"{report['files_indexed'] / run.seconds:.1f} files/s")
    print(f"[{label}] peak RSS: polled {peaks or 'n/a'}; wait4 (rag and reaped children) {run.peak_mb:.0f} MB; "
          f"index on disk {size / 2**20:.1f} MB = {size / max(chunks, 1) / 1024:.1f} KB per chunk")
    if chunks >= 2000:
        print(f"[{label}] chunks/s per 1,000 chunks: {' '.join(watcher.per_thousand(chunks))}")
    for failure in report["files_failed"][:5]:
        print(f"    failed: {failure['path']}: {failure['reason']}")
    tokens = mean_tokens(home)
    print(f"[{label}] {tokens:.1f} tokens per chunk -> {chunks * tokens / run.seconds:.0f} tokens/s", flush=True)
    return {"seconds": run.seconds, "chunks": chunks, "embedded": report["embedded"], "rate": chunks / run.seconds,
            "token_rate": chunks * tokens / run.seconds}


# ---------------------------------------------------------------- phases


def phase_first(notes: Path, work: Path, vectors_from: Path | None = None) -> dict:
    if vectors_from is not None:
        (work / "empty").mkdir(parents=True, exist_ok=True)
        rag(["index", str(work / "empty"), "--json"], rag_env(work / "home"))  # a new index to seed
        seed_vector_cache(work / "home", vectors_from)
        return index_run(notes, work / "home", "mdn first index, vectors from the cache (nothing embedded)")
    # the baseline first: it is short, so its figure is there even if the long MDN run is cut off
    vault = index_run(VAULT, work / "home-vault", "obsidian-help first index (baseline)")
    mdn = index_run(notes, work / "home", "mdn first index")
    if mdn and vault:
        print(f"ratio MDN / Obsidian help vault: chunks/s {mdn['rate'] / vault['rate']:.2f}, tokens/s "
              f"{mdn['token_rate'] / vault['token_rate']:.2f} (target: within 10%)")
    return mdn


EDIT_RUNS = 5  # one-edit and unchanged runs, alternating: median and max of each


def phase_again(notes: Path, work: Path, paths: list[str]) -> None:
    env = rag_env(work / "home")
    rag(["index", "--json"], env)  # whatever an earlier phase left unindexed
    edits, unchanged, rows = [], [], []
    for n in range(EDIT_RUNS):  # a different note each time, spread over the folders
        report, seconds, peak = _edit_and_index(notes / paths[(n * 2 + 1) * len(paths) // (EDIT_RUNS * 2)], env)
        edits.append(seconds)
        rows.append(f"{report.get('files_indexed')} indexed, {report.get('embedded')} embedded, "
                    f"{report.get('chunks_added')} added")
        run = rag(["index", "--json"], env)
        unchanged.append(run.seconds)
    print(f"one edited note (new process, warm page cache, {EDIT_RUNS} notes): median {statistics.median(edits):.2f}s, "
          f"max {max(edits):.2f}s ({', '.join(f'{s:.2f}' for s in edits)}; peak RSS {peak:.0f} MB; {rows[0]})")
    print(f"unchanged re-index (new process, warm page cache, {EDIT_RUNS} runs): median "
          f"{statistics.median(unchanged):.2f}s, max {max(unchanged):.2f}s")
    if not drop_page_cache():
        print("cold page cache: skipped (cannot drop the kernel's page cache here)")
        return
    report, seconds, _peak = _edit_and_index(notes / paths[0], env)
    print(f"one edited note (new process, cold page cache): {seconds:.2f}s wall "
          f"(pipeline {report.get('seconds', 0):.2f}s)")
    drop_page_cache()
    run = rag(["index", "--json"], env)
    report = run.json() if run.rc == 0 else {}
    print(f"unchanged re-index (new process, cold page cache): {run.seconds:.2f}s wall "
          f"(pipeline {report.get('seconds', 0):.2f}s)")


def _edit_and_index(note: Path, env: dict) -> tuple[dict, float, float]:
    with note.open("a", encoding="utf-8") as fh:
        fh.write(f"\n\n## Bench edit {time.time():.0f}\n\n"
                 "A paragraph the scale bench appended about quokkas and lanterns.\n")
    run = rag(["index", "--json"], env)
    return (run.json() if run.rc == 0 else {}), run.seconds, run.peak_mb


def queries(n: int, indexed: list[str], seed: int = 12) -> list[str]:
    """Varied queries: the MDN questions, note titles, a few words from the body, gibberish."""
    rng = random.Random(seed)
    out = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines()]
    for rel in rng.sample(indexed, min(len(indexed), n)):
        text = (MDN / rel).read_text(encoding="utf-8", errors="replace")
        title = next((ln.split(":", 1)[1].strip().strip("'\"") for ln in text.splitlines()[:8]
                      if ln.startswith("title:")), "")
        words = [w for w in text.split() if w.isalpha() and len(w) > 4][40:44]
        out.append(title if len(out) % 2 else " ".join(words) or title)
    out += ["zzqx flurble wombat", "how do I", "CSS", "a"]
    return [q for q in out if q][:n]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def phase_search(work: Path, indexed: list[str], n: int, hits: bool = True) -> None:
    env = rag_env(work / "home")
    qs = queries(n, indexed)
    times, rss = [], []
    for q in qs:
        run = rag(["search", q, "--json", "-k", "5"], env)
        times.append(run.seconds)
        rss.append(run.peak_mb)
    print(f"rag search, new process each ({len(qs)} queries): p50 {percentile(times, .5) * 1000:.0f} ms, "
          f"p95 {percentile(times, .95) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms; peak RSS p50 "
          f"{statistics.median(rss):.0f} MB")
    os.environ.update({k: v for k, v in env.items() if k.startswith(("RAG_", "ANONYMIZED", "OMP_"))})
    from ragcli.config import load_config
    from ragcli.retrieve import Searcher

    config = load_config()
    t = time.perf_counter()
    searcher = Searcher(config)
    searcher.search("warm up", k=5)
    load_s = time.perf_counter() - t
    # Warm means in use: 100 other queries first (other notes' words), then the timed ones.
    for q in queries(n, indexed, seed=13)[30:]:
        searcher.search(q, k=5)
    warm = []
    for q in qs:
        t = time.perf_counter()
        searcher.search(q, k=5)
        warm.append(time.perf_counter() - t)
    print(f"warm Searcher (loaded in {load_s:.2f}s, then {n - 30} other queries): "
          f"p50 {percentile(warm, .5) * 1000:.0f} ms, "
          f"p95 {percentile(warm, .95) * 1000:.0f} ms over {len(qs)} queries")
    if not hits:
        searcher.close()
        return
    wanted = set(indexed)
    asked = [json.loads(line) for line in QUESTIONS.read_text().splitlines()]
    asked = [q for q in asked if {q["path"], *q["also"]} & wanted]
    scores = {}
    for mode in ("keyword", "vector", "hybrid"):
        hits = 0
        for q in asked:
            good = {q["path"], *q["also"]}
            found = [os.path.relpath(h.chunk.path, work / "notes")
                     for h in searcher.search(q["question"], k=5, mode=mode)]
            hits += any(p in good for p in found)
        scores[mode] = hits
    searcher.close()
    print(f"hit@5 on mdn.jsonl ({len(asked)} of 30 questions have their page among the notes indexed): "
          + ", ".join(f"{m} {h}/{len(asked)}" for m, h in scores.items()))


def phase_verify(work: Path) -> None:
    run = rag(["verify", "--json"], rag_env(work / "home"))
    ok = run.json().get("ok") if run.out else None
    print(f"rag verify: exit {run.rc}, ok={ok}, {run.seconds:.2f}s wall, peak RSS {run.peak_mb:.0f} MB")


def phase_watch(work: Path) -> None:
    _watch_once(work, "rag watch")
    script = "echo 8192 > /proc/sys/user/max_inotify_watches && exec \"$@\""
    prefix = ("unshare", "-U", "-r", "sh", "-c", script, "sh")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode == 0:
        _watch_once(work, "rag watch, inotify limit 8192 (polling)", prefix)
    else:
        print("rag watch with a lowered inotify limit: skipped (no user namespaces here)")


def _watch_once(work: Path, label: str, prefix: tuple[str, ...] = ()) -> None:
    env = rag_env(work / "home")
    proc = rag_popen(["watch"], env, prefix=prefix)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for raw in proc.stderr:
            lines.append((time.monotonic() - proc.started_at, raw.decode(errors="replace").rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 900
    ready = None
    while time.monotonic() < deadline and proc.poll() is None and ready is None:
        ready = next((t for t, line in lines if "start-up reconcile:" in line), None)
        time.sleep(0.2)
    if ready is None:
        print(f"{label}: no start-up reconcile line; last lines: {[text for _, text in lines[-5:]]}")
    else:
        time.sleep(5)
        rag_pid = proc.pid  # unshare and sh exec: the same process
        pids = [rag_pid] + children(rag_pid)
        mem = {pid: proc_memory(pid) for pid in pids}
        detail = ", ".join(f"{'rag' if pid == rag_pid else 'worker'} {m.get('VmRSS', 0):.0f} MB"
                           for pid, m in mem.items())
        before = sum(cpu_seconds(pid) for pid in pids)
        time.sleep(30)
        idle_cpu = (sum(cpu_seconds(pid) for pid in pids) - before) / 30
        observer = next((text for _, text in lines if "polling" in text or "inotify" in text), "")
        print(f"{label}: start-up reconcile done {ready:.2f}s after launch; idle RSS 5 s later: {detail} "
              f"(peak {max(m.get('VmHWM', 0) for m in mem.values()):.0f} MB); idle CPU over 30 s "
              f"{idle_cpu:.1%} of a core" + (f"; log: {observer[:160]}" if observer and prefix else ""))
        waits = _edit_to_found(work, env)
        print(f"{label}: a saved edit found by `rag search` after p50 {statistics.median(waits):.2f}s, "
              f"max {max(waits):.2f}s ({len(waits)} edits, each polled every 0.1 s through the watcher)")
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.read()
    reader.join(timeout=5)


def _edit_to_found(work: Path, env: dict, edits: int = 5) -> list[float]:
    """Seconds from appending a new word to a note to `rag search` finding it (end to end,
    as a user who saves and then searches sees it)."""
    notes = sorted((work / "notes").rglob("index.md"))
    waits = []
    for i in range(edits):
        note = notes[(i + 1) * len(notes) // (edits + 1)]
        word = f"quokkalantern{random.randrange(10**9)}"
        started = time.monotonic()
        with note.open("a", encoding="utf-8") as fh:
            fh.write(f"\n\n## Watch edit {i}\n\nThe {word} appears only here.\n")
        while time.monotonic() - started < 120:
            run = rag(["search", word, "--mode", "keyword", "--json", "-k", "1"], env)
            if run.rc == 0 and str(note) in run.out.decode(errors="replace"):
                break
            time.sleep(0.1)
        waits.append(time.monotonic() - started)
    return waits


def phase_interrupt(notes: Path, work: Path, n: int) -> None:
    folder = work / "notes-interrupt"
    copy_notes(note_paths(n), folder)
    whole = index_run(folder, work / "home-whole", f"interrupt bench: {n} notes uninterrupted")
    if not whole:
        return
    for sig in (signal.SIGINT, signal.SIGKILL):
        name = "Ctrl-C (SIGINT)" if sig == signal.SIGINT else "kill -9"
        home = work / f"home-{sig.name}"
        env = rag_env(home)
        proc = rag_popen(["index", str(folder), "--json"], env)
        watcher = Watcher(proc, home, interval=0.25)
        while proc.poll() is None and watcher.chunks() < whole["chunks"] / 2:
            time.sleep(0.25)
        proc.send_signal(sig)
        first = finish(proc)
        watcher.done()
        db = sqlite3.connect(home / "index" / "manifest.sqlite")
        kept_vectors, kept_chunks = (db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0],
                                     db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])
        db.close()
        resume = rag(["index", "--json"], env)
        report = resume.json() if resume.rc == 0 else {}
        total = kept_vectors + report.get("embedded", 0)
        print(f"[{name} at ~50%] stopped after {first.seconds:.1f}s (exit {first.rc}) with {kept_chunks} chunks and "
              f"{kept_vectors} vectors kept; resume: exit {resume.rc}, {resume.seconds:.1f}s, embedded "
              f"{report.get('embedded')}, chunks {report.get('chunks_added')} added; vectors kept + resumed = {total} "
              f"vs {whole['embedded']} uninterrupted ({total - whole['embedded']:+d}); time "
              f"{first.seconds + resume.seconds:.1f}s vs {whole['seconds']:.1f}s "
              f"({(first.seconds + resume.seconds) / whole['seconds']:.2f}x)")
        verify = rag(["verify", "--json"], env)
        verified = verify.json().get('ok') if verify.out else None
        print(f"    rag verify after the resume: exit {verify.rc}, ok={verified}")


def start_chroma_server(work: Path):
    """A `chroma run` on loopback that every later `rag` (and the warm Searcher) uses: rag_env
    copies this process's environment."""
    from servers import chroma_server

    server = chroma_server(work / "chroma-data", work / "chroma.log").start()
    os.environ["RAG_CHROMA_URL"] = server.url
    print(f"every phase through a Chroma server at {server.url} (pid {server.proc.pid})", flush=True)
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, help="index only the first N notes (sorted by path), plus the "
                    "pages of bench/questions/mdn.jsonl unless --no-question-pages")
    ap.add_argument("--no-question-pages", action="store_true")
    ap.add_argument("--interrupt-limit", type=int, default=500, help="notes for the interruption runs")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--skip", default="", help=f"comma list of phases to skip: {', '.join(PHASES)}")
    ap.add_argument("--keep", type=Path, help="work here and keep it (default: a temp dir, removed)")
    ap.add_argument("--vectors-from", type=Path, metavar="HOME",
                    help="seed the vector cache from HOME (a --keep folder's home/, same notes): the first "
                         "index embeds nothing and there is no vault baseline; for store comparisons")
    ap.add_argument("--chroma-server", action="store_true",
                    help="every phase against a local `chroma run` on loopback instead of the embedded store")
    opts = ap.parse_args()
    skip = {s for s in opts.skip.split(",") if s}
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # Started in the background by a shell (`... &`): SIGINT is ignored, and `rag` children
        # would inherit that, so the Ctrl-C phase would wait forever. A handler here is reset
        # to the default in each child at exec.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not MDN.is_dir():
        sys.exit(f"corpus not found: {MDN}")
    work = opts.keep or Path(tempfile.mkdtemp(prefix="ragcli-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    notes = work / "notes"
    paths = note_paths(opts.limit, with_questions=not opts.no_question_pages)
    started = time.monotonic()
    if not notes.exists():
        copy_notes(paths, notes)
    extra = (f" (the first {opts.limit} by path + the question pages)"
             if opts.limit and not opts.no_question_pages else "")
    megabytes = sum((MDN / p).stat().st_size for p in paths) / 2**20
    print(f"{len(paths)} MDN notes{extra} ({megabytes:.1f} MB) under {notes}; "
          f"copied in {time.monotonic() - started:.1f}s; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
          flush=True)
    warm_models(rag_env(work / "warm-home"))
    server = start_chroma_server(work) if opts.chroma_server else None
    try:
        if "first" not in skip:
            phase_first(notes, work, opts.vectors_from)
        if "again" not in skip:
            phase_again(notes, work, paths)
        if "search" not in skip:
            phase_search(work, paths, opts.queries)
        if "verify" not in skip:
            phase_verify(work)
        if "watch" not in skip:
            phase_watch(work)
        if "interrupt" not in skip:
            phase_interrupt(notes, work, min(opts.interrupt_limit, len(paths)))
        if "twophase" not in skip:
            from scale_twophase import phase_twophase

            phase_twophase(notes, work, VAULT)
    finally:
        if server is not None:
            peak = proc_memory(server.proc.pid).get("VmHWM", 0)
            server.stop()
            print(f"[chroma server] peak RSS {peak:.0f} MB; data folder "
                  f"{sum(f.stat().st_size for f in (work / 'chroma-data').rglob('*') if f.is_file()) / 2**20:.1f} MB")
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"bench done in {time.monotonic() - started:.0f}s")


if __name__ == "__main__":
    main()
