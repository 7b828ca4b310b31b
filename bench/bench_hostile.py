"""The hostile folder through `rag index`: each input tried and its outcome, the run's time
and peak memory (ru_maxrss of rag itself and of its children: the parser worker).

    python bench/bench_hostile.py [--big-mb 10.5] [--bomb-mb 1024] [--keep DIR]

Prints figures; asserts nothing. Builds the folder with tests/test_hostile.make_hostile.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]


def run(args: list[str], env: dict) -> tuple[int, bytes, bytes, float, float]:
    """(rc, stdout, stderr, seconds, peak RSS MB of rag and the children it reaped) of one run."""
    import threading

    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "ragcli.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    chunks: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n, s: chunks.__setitem__(n, s.read()), args=(n, s))
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    _pid, status, usage = os.wait4(proc.pid, 0)  # rusage covers rag and its reaped children
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return proc.returncode, chunks["out"], chunks["err"], time.monotonic() - started, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-mb", type=float, default=10.5)
    parser.add_argument("--bomb-mb", type=int, default=1024)
    parser.add_argument("--keep", type=Path, help="build here and keep it (default: a temp dir)")
    opts = parser.parse_args()

    from test_hostile import OUTSIDE_WORD, make_hostile, outcomes

    base = opts.keep or Path(tempfile.mkdtemp(prefix="ragcli-hostile-"))
    folder, outside, home = base / "notes", base / "outside", base / "home"
    for p in (folder, outside, home):
        shutil.rmtree(p, ignore_errors=True)
    t0 = time.monotonic()
    expect = make_hostile(folder, outside, big_mb=opts.big_mb, bomb_mb=opts.bomb_mb)
    print(f"built {len(expect)} hostile inputs in {time.monotonic() - t0:.1f}s under {folder}")
    env = dict(os.environ, RAG_HOME=str(home), PYTHONPATH=str(ROOT))
    env.setdefault("RAG_MODELS_DIR", str(Path(tempfile.gettempdir()) / "ragcli-bench-models"))

    warm = base / "warm"  # load/convert the embedding model once, outside the measured run
    warm.mkdir(exist_ok=True)
    (warm / "a.md").write_text("# Warm\n\nwarm up\n")
    run(["index", str(warm)], dict(env, RAG_HOME=str(base / "warm-home")))

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rc, out, err, seconds, own_mb = run(["index", str(folder), "--json"], env)
    children_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\nrag index: exit {rc}, {seconds:.1f}s wall, traceback: {'YES' if b'Traceback' in err else 'no'}")
    print(f"peak RSS (ru_maxrss, largest single process): rag index and its parser worker {own_mb:.0f} MB; "
          f"all children of this bench so far {children_mb:.0f} MB (before the run: {before / 1024:.0f} MB)")
    if rc != 0:
        print(err.decode(errors="replace")[-3000:])
        return
    report = json.loads(out)
    result = outcomes(report, folder, expect, home)
    print(f"\n{'input':48s} {'expected':8s} outcome")
    for name in sorted(result):
        print(f"{name:48s} {expect[name]:8s} {result[name][:110]}")
    print(f"\nfiles indexed {report['files_indexed']}, failed {len(report['files_failed'])}, "
          f"chunks {report['chunks_added']}, warnings {len(report['warnings'])}")
    rc, out, _err, seconds, _ = run(["search", OUTSIDE_WORD, "--json", "--mode", "keyword"], env)
    hits = json.loads(out)["results"] if rc == 0 else None
    print(f"search for the word that lives only outside the root: {len(hits) if hits is not None else 'error'} hit(s)")
    rc, out, _err, seconds, _ = run(["verify", "--json"], env)
    print(f"rag verify: exit {rc} in {seconds:.1f}s: {json.loads(out)['ok'] if out else '?'}")
    if not opts.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
