"""Small helpers shared by bench_pdfs.py and bench_scale.py: run the real CLI as a child
process with its time and peak memory, read a live process's memory, a git worktree of an
older revision for before/after runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RAG_BENCH_SHARED", ROOT.parent / "shared"))  # corpora, by path only
CORPORA = SHARED / "corpora"
MODELS_CACHE = Path(os.environ.get("RAG_BENCH_MODELS", Path.home() / ".cache" / "ragcli-bench" / "models"))


def rag_env(home: Path, code: Path = ROOT, **extra: str) -> dict:
    """The environment for `rag` with its index in ``home``, running the code under ``code``."""
    MODELS_CACHE.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, RAG_HOME=str(home), RAG_MODELS_DIR=str(MODELS_CACHE),
               PYTHONPATH=str(code), ANONYMIZED_TELEMETRY="False", OMP_WAIT_POLICY="PASSIVE")
    env.update(extra)
    return env


class Run:
    """One finished `rag` process: exit code, output, wall seconds, peak RSS (MB) of the process
    and of the children it reaped (the parse worker), from wait4's rusage."""

    def __init__(self, rc: int, out: bytes, err: bytes, seconds: float, peak_mb: float):
        self.rc, self.out, self.err, self.seconds, self.peak_mb = rc, out, err, seconds, peak_mb

    def json(self):
        import json

        return json.loads(self.out)


def rag(args: list[str], env: dict, stdin: bytes | None = None) -> Run:
    proc = rag_popen(args, env, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    return finish(proc, stdin)


def rag_popen(args: list[str], env: dict, prefix: tuple[str, ...] = (), **kw) -> subprocess.Popen:
    proc = subprocess.Popen([*prefix, sys.executable, "-m", "ragcli.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=env.get("PYTHONPATH", ROOT), **kw)
    proc.started_at = time.monotonic()
    return proc


def finish(proc: subprocess.Popen, stdin: bytes | None = None) -> Run:
    """Wait for a process from rag_popen; its rusage covers it and the children it reaped."""
    chunks: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda n, s: chunks.__setitem__(n, s.read()), args=(n, s))
               for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    if stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in readers:
        t.join()
    return Run(proc.returncode, chunks["out"], chunks["err"], time.monotonic() - proc.started_at,
               usage.ru_maxrss / 1024)


def proc_memory(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM (peak RSS), VmSize and VmPeak (what RLIMIT_AS limits) in MB, from /proc."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "VmSize", "VmPeak"):
                    out[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a live process has used so far (its threads included)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def worktree_at(rev: str) -> Path:
    """The tree of ``rev`` exported into a temp dir (the "before" of a before/after run)."""
    path = Path(tempfile.mkdtemp(prefix="ragcli-before-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


def drop_worktree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def warm_models(env: dict) -> None:
    """Convert the built-in embedding model once, outside any timing."""
    # llama_first before ragcli.embed brings numpy: a CUDA build crashes otherwise (ragcli/native.py)
    code = ("import ragcli.native as n; n.llama_first(); from ragcli.config import load_config; "
            "from ragcli.embed import make_embedder; make_embedder(load_config()).close()")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=env.get("PYTHONPATH", ROOT))


def drop_page_cache() -> bool:
    """Empty the kernel's page cache (root only), as after a reboot: what a first command
    reads from disk. False where this machine does not allow it."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False

