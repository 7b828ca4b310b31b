"""Real servers on 127.0.0.1 for the remote seams' tests and benches: a Chroma server
(`chroma run`) and llama-cpp-python's OpenAI-compatible server serving an embedding GGUF.

A plain module, imported as ``from servers import ...`` (pytest puts tests/ on sys.path;
bench/ scripts add it). Each server is a child process with its log in a file; ``wait_ready``
polls its health URL until a generous deadline, and ``stop`` ends it (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

DEADLINE = 120.0  # seconds a server may take to answer its health check on a busy machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chroma_cli() -> str | None:
    """The `chroma` executable next to this Python (the venv's), or one on PATH."""
    beside = Path(sys.executable).with_name("chroma")
    return str(beside) if beside.is_file() else shutil.which("chroma")


def has_llama_server() -> bool:
    try:
        import llama_cpp.server.app  # noqa: F401
    except Exception:  # noqa: BLE001 - missing extras raise ImportError or others
        return False
    return True


class Server:
    """A child process serving HTTP on 127.0.0.1:``port``, healthy when ``health`` answers 200."""

    def __init__(self, argv: list[str], port: int, health: str, log: Path, env: dict | None = None):
        self.argv, self.port, self.health, self.log_path = argv, port, health, log
        self.env = env
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, deadline: float = DEADLINE) -> "Server":
        log = open(self.log_path, "ab")
        env = dict(os.environ, ANONYMIZED_TELEMETRY="False", **(self.env or {}))
        self.proc = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        self.wait_ready(deadline)
        return self

    def wait_ready(self, deadline: float = DEADLINE) -> None:
        until = time.monotonic() + deadline
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.argv[0]} exited ({self.proc.returncode}):\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + self.health, timeout=5) as resp:
                    json.load(resp)
                    return
            except (OSError, ValueError):
                pass
            if time.monotonic() > until:
                self.stop()
                raise RuntimeError(f"{self.argv[0]} did not answer {self.health} in {deadline:g} s:\n{self.log()}")
            time.sleep(0.3)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def stop(self, kill: bool = False) -> None:
        """End the server (SIGKILL at once with ``kill``: a server that dies, not one that stops)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def chroma_server(path: Path, log: Path, port: int | None = None) -> Server:
    """`chroma run --path PATH` on loopback (not started: call ``start()``)."""
    exe = chroma_cli()
    if exe is None:
        raise RuntimeError("the chroma CLI is not installed (it comes with the chromadb package)")
    port = port or free_port()
    return Server([exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)], port,
                  "/api/v2/heartbeat", log)


# llama-cpp-python's OpenAI-compatible server, started through ragcli's loader of llama.cpp: built on
# a CPU with AMX, llama.cpp 0.3.36 dies in the first decode with the weights repacked for AMX
# (README, "GPU"), the loader turns that off, and the server has no switch of its own for it.
LLAMA_SERVER = [sys.executable, "-c", "import runpy; from ragcli.models.llama import load_llama_cpp; "
                "load_llama_cpp(); runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)"]


def embedding_server(model: Path, log: Path, port: int | None = None, extra: tuple[str, ...] = (),
                     threads: int = 2) -> Server:
    """llama-cpp-python's OpenAI-compatible server with ``model`` as an embedding model (not
    started). Flash attention as in-process: without it, the server's packed batches are slower."""
    port = port or free_port()
    argv = [*LLAMA_SERVER, "--model", str(model), "--embedding", "true",
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "512", "--flash_attn", "true",
            "--n_threads", str(threads), "--n_threads_batch", str(threads), "--verbose", "false", *extra]
    return Server(argv, port, "/v1/models", log, env={"OMP_WAIT_POLICY": "PASSIVE"})
