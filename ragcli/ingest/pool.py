"""Notes parsed and chunked in worker processes, in order, while the caller writes.

Phase one of `rag index` reads, parses and chunks each note, then writes its chunks and
keyword rows. In one process each step waits for the others: on all of MDN (14,235 notes)
parsing and chunking were 70% of the phase's CPU and the writes 24% (bench/ISSUE21.md).
``ChunkPool`` runs the first two in worker processes, one per core, and hands back the
results in the order the notes were given, so the caller writes them as before while the
workers go on.

Only notes that parse in the caller's process anyway go to the pool (Markdown and text up
to ``WORKER_MIN_BYTES``): PDFs and big notes keep the limited child of ``worker.py``.
Chunks come out the same as the caller's own ``chunk_document`` would cut them: the count
is the embedder's (``token_counter``, a picklable count of the same vocabulary).

Workers are plain ``python -m ragcli.ingest.pool`` children, as ``worker.py``'s: never
forked (forking after chromadb or llama.cpp have started threads is unsafe), and not
multiprocessing's spawn either, which runs the caller's main module again in each child (a
library user's script without a ``__main__`` guard would index again, recursively). They
get pickled requests on stdin and answer on stdout in order, in their own session (Ctrl-C
goes to the caller, who stops them), and exit when the caller goes (end of stdin), even
when it was killed. Each loads llama.cpp's library before any other native one
(``ragcli.native``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..children import child_env
from ..closing import Closing
from ..native import llama_first
from ..types import Chunk, Document

POOL_MIN_BYTES = 4 * 1024 * 1024  # below this a run is seconds: starting workers (~1 s each) costs more
AHEAD_PER_WORKER = 16  # notes handed out before their turn: keeps workers busy, bounds memory


@dataclass(frozen=True)
class ChunkPlan:
    """What ``chunk_document`` needs besides the note: sent to each worker once."""

    count_tokens: Callable[[str], int]  # picklable: the embedder's ``token_counter``
    max_tokens: int
    overlap: int
    max_bytes: int  # the largest file read (``max_file_mb``)
    resolver: dict | None = None  # ``NoteResolver.to_dict()``: embeds resolve as in-process
    adds_up: bool = False  # the counts add up at whitespace (``chunk_document``)


@dataclass
class Chunked:
    """One note's outcome: its document (without sections: they are in the chunks) and its
    chunks, or why it could not be read."""

    path: Path
    doc: Document | None = None
    chunks: list[Chunk] = field(default_factory=list)
    failure: str | None = None


# The caller's writes are the floor: for 2,000 MDN notes 6.5 s of CPU against the workers'
# 12 s, so past ~3 workers more only wait for the writer (and each holds ~36 MB).
MAX_WORKERS = 4


def workers_wanted() -> int:
    """One worker per core this process may run on, up to MAX_WORKERS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


class PoolBroken(Exception):
    """A worker died (killed, out of memory): the caller reads the rest itself."""


class ChunkPool(Closing):
    """Worker processes that parse and chunk notes; close it (or use ``with``) when done."""

    def __init__(self, plan: ChunkPlan, workers: int | None = None):
        self.children = [_Child(plan) for _ in range(workers or workers_wanted())]

    def chunked(self, paths: Iterable[Path]) -> Iterator[Chunked]:
        """Each path's ``Chunked``, in the order given. Note k goes to child k mod n, which
        answers in the order it was asked: so the answers come back in order. Raises
        ``PoolBroken`` when a child dies."""
        paths = list(paths)
        n, ahead = len(self.children), len(self.children) * AHEAD_PER_WORKER
        for k, path in enumerate(paths[:ahead]):
            self.children[k % n].ask(path)
        for k in range(len(paths)):
            done = self.children[k % n].answer()
            if k + ahead < len(paths):
                self.children[(k + ahead) % n].ask(paths[k + ahead])
            yield done

    def close(self) -> None:
        for child in self.children:
            child.close()


class _Child:
    """One worker process and its pipes; frames are an 8-byte length and a pickle."""

    def __init__(self, plan: ChunkPlan):
        self.proc = subprocess.Popen([sys.executable, "-m", "ragcli.ingest.pool"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=child_env(), start_new_session=True)
        self.ask(plan)

    def ask(self, request) -> None:
        try:
            _write_frame(self.proc.stdin, request)
        except OSError:  # a broken pipe: the child died
            raise PoolBroken("a parse worker is gone") from None

    def answer(self) -> Chunked:
        reply = _read_frame(self.proc.stdout)
        if reply is None:
            raise PoolBroken(f"a parse worker ended (exit {self.proc.poll()})")
        return reply

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # the child's end of input: it exits
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


def _write_frame(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_frame(stream):
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None  # noqa: S301 - from our own child or parent


# ---------------------------------------------------------------- worker side


def _child_main() -> None:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print goes to stderr, never into the answers
    llama_first()
    from .obsidian import NoteResolver

    requests = sys.stdin.buffer
    plan = _read_frame(requests)
    resolver = NoteResolver.from_dict(plan.resolver) if plan and plan.resolver else None
    while (path := _read_frame(requests)) is not None:
        _write_frame(out, chunk_note(path, plan, resolver))


def chunk_note(path: Path, plan: ChunkPlan, resolver) -> Chunked:
    """Read, parse and chunk one note. A parser's failure is the note's, as in ``worker.py``."""
    from .chunk import chunk_document
    from .errors import failure_reason
    from .read import read_and_parse

    try:
        doc = read_and_parse(path, plan.max_bytes, resolver)
    except Exception as exc:  # noqa: BLE001 - the caller turns any failure into a reason for this file
        return Chunked(path, failure=failure_reason(exc))
    chunks = chunk_document(doc, plan.count_tokens, plan.max_tokens, plan.overlap, plan.adds_up)
    doc.sections = []  # the chunks carry the text: not pickled back a second time
    return Chunked(path, doc, chunks)


if __name__ == "__main__":
    from ragcli.ingest.pool import _child_main as main  # its classes pickle by their real name

    main()
