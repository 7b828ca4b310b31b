"""bench_scale.py's ``twophase`` phase: what a user of a big vault sees while `rag index` runs
its two phases (keyword rows first, then vectors).

One `rag index` of the notes into a fresh home (an empty vector cache), polled from outside:
- when a keyword search (`rag search --mode keyword`, a new process) of the note phase one
  writes LAST (the largest path: phase one goes in sorted order) finds it; a word found in no
  other note is appended to that note first, so the search finds it or nothing;
- when every vector is in (the run's end), and phase two's chunks/s (vectors made over the
  seconds after ``keyword_seconds``), against the Obsidian help vault indexed the same way
  in the same run, before it;
- peak RSS of rag and its parse worker (polled VmHWM, and wait4 at the end);
- hit@5 of bench/questions/mdn.jsonl (keyword, vector, hybrid) when keyword search is ready
  (no vectors yet), when the vectors in pass 10%, 25% and 50% of the chunks, and at the end:
  each taken by a new process (``--hits``) with its own Searcher while phase two goes on, as
  a `rag search` a user runs then would see it. The share of vectors in is read from the
  manifest when that process starts and when it ends. ``python bench/scale_twophase.py
  --hits HOME NOTES`` takes the same figure by hand (e.g. where a run must stop early).

Prints figures; asserts nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from benchlib import ROOT, children, finish, proc_memory, rag, rag_env, rag_popen

QUESTIONS = ROOT / "bench" / "questions" / "mdn.jsonl"
MARK = "zqxlastnotequokka"  # in no MDN note
CHECKPOINTS = (0.0, 0.10, 0.25, 0.50)  # 0: keyword rows only, as phase two starts


def vectors_in(db_path: Path) -> tuple[int, int]:
    """(chunks with a vector in the cache, all chunks), read-only, beside the writer."""
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
        try:
            total = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            dim = db.execute("SELECT length(vec) FROM vectors LIMIT 1").fetchone()
            if not dim:
                return 0, total
            done = db.execute("SELECT COUNT(*) FROM chunks c JOIN vectors v ON v.key = c.vec_key"
                              " WHERE length(v.vec) = ?", (dim[0],)).fetchone()[0]
            return done, total
        finally:
            db.close()
    except sqlite3.Error:
        return -1, -1


def has_file(db_path: Path, path: str) -> bool:
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=10)
        try:
            return db.execute("SELECT 1 FROM files WHERE path = ?", (path,)).fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error:
        return False


def hits(home: Path, notes: Path) -> dict:
    """hit@5 per mode over the MDN questions whose page is among the notes (a new process's
    Searcher: what `rag search` sees now). A hit: a chunk of the page or an ``also`` page
    among the top 5 chunks, as bench_scale's ``search`` phase counts it."""
    os.environ.update(rag_env(home))
    from ragcli.config import load_config
    from ragcli.retrieve import Searcher

    db_path = home / "index" / "manifest.sqlite"
    before = vectors_in(db_path)
    started = time.monotonic()
    searcher = Searcher(load_config())
    asked = [json.loads(line) for line in QUESTIONS.read_text().splitlines()]
    asked = [q for q in asked if any((notes / p).exists() for p in [q["path"], *q["also"]])]
    scores = {}
    for mode in ("keyword", "vector", "hybrid"):
        found = 0
        for q in asked:
            good = {q["path"], *q["also"]}
            paths = [os.path.relpath(h.chunk.path, notes) for h in searcher.search(q["question"], k=5, mode=mode)]
            found += any(p in good for p in paths)
        scores[mode] = found
    searcher.close()
    return {"questions": len(asked), "scores": scores, "before": before, "after": vectors_in(db_path),
            "seconds": time.monotonic() - started}


def _hits_child(home: Path, notes: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--hits", str(home), str(notes)], capture_output=True,
                          text=True, env=rag_env(home, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'bench'}"))
    if proc.returncode != 0:
        return {"error": proc.stderr[-600:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _print_hits(label: str, result: dict, t: float) -> None:
    if "error" in result:
        print(f"[twophase] hit@5 {label}: failed: {result['error']}", flush=True)
        return
    (d0, n0), (d1, n1) = result["before"], result["after"]
    n = result["questions"]
    print(f"[twophase] hit@5 {label} (t={t:.0f}s; vectors in {d0}/{n0} = {d0 / max(n0, 1):.1%} at its start, "
          f"{d1 / max(n1, 1):.1%} at its end, {result['seconds']:.0f}s): "
          + ", ".join(f"{m} {s}/{n}" for m, s in result["scores"].items()), flush=True)


def phase_two_rate(report: dict) -> float:
    """Chunks embedded per second after keyword search was ready, from `rag index --json`."""
    two = report["seconds"] - report["keyword_seconds"]
    return report["embedded"] / two if two > 0 else 0.0


def baseline(vault: Path, home: Path) -> float | None:
    """Phase two's chunks/s on the help vault (a fresh home), the like-for-like figure."""
    run = rag(["index", str(vault), "--json"], rag_env(home))
    if run.rc != 0:
        print(f"[twophase] vault baseline failed: {run.err.decode(errors='replace')[-800:]}")
        return None
    report = run.json()
    rate = phase_two_rate(report)
    print(f"[twophase] obsidian-help baseline: {report['chunks_added']} chunks; keyword search ready at "
          f"{report['keyword_seconds']:.1f}s, every vector at {report['seconds']:.1f}s; phase two "
          f"{report['embedded']} vectors at {rate:.1f} chunks/s; wall {run.seconds:.1f}s, "
          f"peak RSS {run.peak_mb:.0f} MB", flush=True)
    return rate


def phase_twophase(notes: Path, work: Path, vault: Path) -> None:
    vault_rate = baseline(vault, work / "home-vault-2p")
    last = max((p for p in notes.rglob("*.md")), key=str)
    with last.open("a", encoding="utf-8") as fh:
        fh.write(f"\n\nThe {MARK} marks the note indexed last.\n")
    home = work / "home-2p"
    env = rag_env(home)
    db_path = home / "index" / "manifest.sqlite"
    proc = rag_popen(["index", str(notes), "--json"], env)
    peaks: dict[int, tuple[str, float]] = {}  # pid -> (role, peak RSS MB)
    keyword_at = None
    pending = list(CHECKPOINTS)
    last_print = (0.0, 0)  # (t, vectors) of the last progress line
    while not _exited(proc.pid):
        _note_peaks(proc.pid, peaks)
        t = time.monotonic() - proc.started_at
        if keyword_at is None and has_file(db_path, str(last)):
            run = rag(["search", MARK, "--mode", "keyword", "--json", "-k", "3"], env)
            if run.rc == 0 and str(last) in run.out.decode(errors="replace"):
                keyword_at = time.monotonic() - proc.started_at
                print(f"[twophase] keyword search finds the note indexed last ({last.relative_to(notes)}) "
                      f"{keyword_at:.1f}s after `rag index` started (the search itself {run.seconds:.1f}s)",
                      flush=True)
        if keyword_at is not None:
            done, total = vectors_in(db_path)
            if done >= 0:
                if t - last_print[0] > 300:
                    rate = (done - last_print[1]) / (t - last_print[0])
                    print(f"[twophase] t={t:.0f}s: {done}/{total} vectors ({done / max(total, 1):.1%}), "
                          f"{rate:.1f} chunks/s since the last line; load {os.getloadavg()[0]:.1f}", flush=True)
                    last_print = (t, done)
                while pending and total and done >= pending[0] * total:
                    share = pending.pop(0)
                    _print_hits(f"at {share:.0%} of the vectors", _hits_child(home, notes), t)
        time.sleep(5 if keyword_at is not None else 1)
    run = finish(proc)
    shown = ", ".join(f"{role} {mb:.0f} MB" for role, mb in sorted(peaks.values()))
    if run.rc != 0:
        print(f"[twophase] rag index stopped ({run.rc}) after {run.seconds:.0f}s; peak RSS {shown}, wait4 "
              f"{run.peak_mb:.0f} MB; {run.err.decode(errors='replace')[-1500:]}")
        return
    report = run.json()
    rate = phase_two_rate(report)
    print(f"[twophase] mdn: {report['files_indexed']} notes, {report['chunks_added']} chunks; phase one "
          f"(keyword_seconds) {report['keyword_seconds']:.1f}s; every vector in at {report['seconds']:.1f}s "
          f"(wall {run.seconds:.1f}s); phase two {report['embedded']} vectors at {rate:.1f} chunks/s"
          + (f" = {rate / vault_rate:.2f}x the help vault's {vault_rate:.1f}" if vault_rate else ""), flush=True)
    print(f"[twophase] peak RSS: polled {shown or 'n/a'}; wait4 {run.peak_mb:.0f} MB", flush=True)
    _print_hits("at the end (100%)", _hits_child(home, notes), run.seconds)


def _exited(pid: int) -> bool:
    """Whether the child has ended, without reaping it (``Popen.poll`` would: ``finish`` then
    gets no rusage, and no peak RSS)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _note_peaks(pid: int, peaks: dict) -> None:
    for p, role in [(pid, "rag")] + [(c, "worker") for c in children(pid)]:
        peak = proc_memory(p).get("VmHWM")
        if peak:
            peaks[p] = (role, max(peak, peaks.get(p, (role, 0.0))[1]))


if __name__ == "__main__" and sys.argv[1:2] == ["--hits"]:
    print(json.dumps(hits(Path(sys.argv[2]), Path(sys.argv[3]))))
