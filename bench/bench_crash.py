"""Kills survived: `kill -9` at random moments of `rag index` on a copy of a vault (default:
the Obsidian help vault in ../shared), with edits between the kills; then `rag index`,
`rag verify` and a comparison with a clean build of the same files.

    python bench/bench_crash.py [--kills 5] [--max-delay 25] [--seed 1] [--vault DIR]

This is acceptance check 1 (five kills on the Obsidian vault). It prints figures and the
verdict; it asserts nothing. The same check runs as a test marked slow (`python -m pytest -m slow`)
(tests/test_crash.py::test_acceptance_five_kills_on_the_obsidian_vault).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
VAULT = ROOT.parent / "shared" / "corpora" / "obsidian-help" / "en"


def cli(args: list[str], home: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ragcli.cli", *map(str, args)], capture_output=True,
                          env=dict(env, RAG_HOME=str(home)), timeout=3600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--min-delay", type=float, default=3.0)
    parser.add_argument("--max-delay", type=float, default=25.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--vault", type=Path, default=VAULT)
    opts = parser.parse_args()
    if not opts.vault.is_dir():
        sys.exit(f"no vault at {opts.vault}")

    from test_crash import edit
    from helpers import index_state

    base = Path(tempfile.mkdtemp(prefix="ragcli-crash-"))
    notes, home, clean = base / "vault", base / "home", base / "clean"
    shutil.copytree(opts.vault, notes)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.setdefault("RAG_MODELS_DIR", str(Path(tempfile.gettempdir()) / "ragcli-bench-models"))
    rng = random.Random(opts.seed)
    print(f"vault copy: {sum(1 for _ in notes.rglob('*.md'))} notes under {notes}; seed {opts.seed}")

    survived, moments = 0, []
    for step in range(opts.kills):
        if step:
            edit(notes, rng, step)
        delay = rng.uniform(opts.min_delay, opts.max_delay)
        proc = subprocess.Popen([sys.executable, "-m", "ragcli.cli", "index", str(notes)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(env, RAG_HOME=str(home)))
        try:
            proc.wait(timeout=delay)
            moments.append(f"{delay:.1f}s (finished first, exit {proc.returncode})")
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            survived += 1
            status = json.loads(cli(["status", "--json"], home, env).stdout or "{}")
            moments.append(f"{delay:.1f}s (killed; index then held {status.get('files')} files, "
                           f"{status.get('chunks')} chunks)")
    for i, m in enumerate(moments, 1):
        print(f"  kill {i}: at {m}")

    t0 = time.monotonic()
    final = cli(["index", str(notes)], home, env)
    t_final = time.monotonic() - t0
    t0 = time.monotonic()
    verify = cli(["verify", "--json"], home, env)
    t_verify = time.monotonic() - t0
    t0 = time.monotonic()
    cli(["index", str(notes)], clean, env)
    t_clean = time.monotonic() - t0
    mine, theirs = index_state(home), index_state(clean)
    s_mine = json.loads(cli(["status", "--json"], home, env).stdout)
    s_clean = json.loads(cli(["status", "--json"], clean, env).stdout)

    print(f"\nkills survived: {survived} of {opts.kills} (the rest landed after the run had finished)")
    print(f"next rag index: exit {final.returncode} in {t_final:.1f}s; traceback: "
          f"{'YES' if b'Traceback' in final.stderr else 'no'}")
    print(f"rag verify: exit {verify.returncode} in {t_verify:.1f}s, ok={json.loads(verify.stdout or '{}').get('ok')}")
    print(f"clean build of the same files: {t_clean:.1f}s")
    print(f"status files/chunks: after kills {s_mine['files']}/{s_mine['chunks']}, "
          f"clean {s_clean['files']}/{s_clean['chunks']}")
    print(f"manifest (path -> chunk ids) equal to clean build: {mine[0] == theirs[0]}")
    print(f"Chroma id set equal to clean build: {mine[1] == theirs[1]} ({len(mine[1])} ids)")
    verdict = (final.returncode == 0 and verify.returncode == 0 and mine == theirs
               and (s_mine["files"], s_mine["chunks"]) == (s_clean["files"], s_clean["chunks"]))
    print(f"ACCEPTANCE 1: {'PASS' if verdict else 'FAIL'}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
