"""Phase two of the index flow: embed the chunks written without a vector, in committed batches.

``PendingEmbedder`` embeds one batch on a thread while the calling thread writes the one
before it. The thread only runs the embedder on texts it is given: every read and write of
the index (SQLite and Chroma) stays on the caller's thread, the index's one writer, so the
write protocol of ``store/index.py`` holds as it does without the thread.

It runs in two ways:
- ``drain``: phase two proper, after phase one, until no chunk waits for a vector;
- ``feed``: during phase one, between two of its batches (the overlap, ``index_overlap``).
  It never waits for the embedder: it writes the batch the embedder has finished, if it
  has, and hands it the next. It reads only chunks past the rowid where the run began
  (``after``): rows this run's phase one wrote, which it does not replace again, so nothing
  is embedded for a chunk that is then thrown away. Chunks an earlier, interrupted run left
  waiting are embedded by ``drain``, which walks from the start.

A run killed at any point leaves committed batches (each vector cached before Chroma gets
it) and chunks still waiting: the next run embeds only those, so nothing is embedded twice.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from ..closing import Closing
from ..progress import ProgressFn
from ..progress import report as report_progress

BATCH_CHUNKS = 128  # chunks embedded and written per transaction


@dataclass
class _Job:
    """A batch handed to the embedder: its vector keys, a path for the progress, the vectors."""

    keys: list[str]
    path: str
    vectors: Future


class PendingEmbedder(Closing):
    """Embeds ``idx``'s waiting chunks with ``embedder``; ``made`` counts the vectors written."""

    def __init__(self, idx, embedder, progress: ProgressFn | None = None,
                 check_cancelled: Callable[[], None] = lambda: None, after: int = 0):
        self.idx, self.embedder = idx, embedder
        self.progress, self.check_cancelled = progress, check_cancelled
        self.after = after  # the rowid of the last chunk taken: each batch reads on from there
        self.made = 0
        self._inflight: _Job | None = None
        self._ahead = ThreadPoolExecutor(1, thread_name_prefix="ragcli-embed-ahead")
        self._shown = None  # (vectors made when drain began, chunks waiting then): its progress

    def close(self) -> None:
        """Wait for the batch on the thread (never close the embedder under it); unwritten, it
        is embedded again by the next run, as a batch a kill interrupts."""
        self._ahead.shutdown(wait=True)

    def feed(self) -> None:
        """During phase one: when the embedder has finished its batch, hand it the next and
        write the one it finished. Returns at once while it is still embedding."""
        if self._inflight is not None and not self._inflight.vectors.done():
            return
        self._next(self.idx.pending_vectors(BATCH_CHUNKS, self.after))

    def drain(self) -> int:
        """Phase two: embed until a walk from the start finds no chunk waiting; returns the
        vectors this call made."""
        made_before = self.made
        self._shown = (self.made, self.idx.pending_counts()[0])  # the batch on the thread among them
        if self._shown[1]:
            report_progress(self.progress, "Embedding", 0, self._shown[1], note="keyword search ready")
        while True:
            self.check_cancelled()
            batch = self.idx.pending_vectors(BATCH_CHUNKS, self.after)
            if not batch and self.after:  # done only when a walk from the start finds nothing left
                self._write(self._inflight)
                self._inflight, self.after = None, 0  # written first: the walk must not pick it again
                batch = self.idx.pending_vectors(BATCH_CHUNKS)
            if not batch:
                break
            self._next(batch)
        self._write(self._inflight)
        self._inflight = None
        return self.made - made_before

    def _next(self, batch: list[tuple[str, str, int]]) -> None:
        """Hand ``batch`` (``pending_vectors`` rows) to the embedder, then write the batch it
        embedded before: on a GPU that write was a fifth of phase two, time the embedder sat
        idle (bench/ISSUE21.md)."""
        if not batch:
            return
        self.after = batch[-1][2]
        # A text repeated across the two batches (one key) is embedded once.
        batch = [b for b in batch if self._inflight is None or b[0] not in self._inflight.keys]
        if batch:
            job = self._submit(batch)
            self._write(self._inflight)
            self._inflight = job

    def _submit(self, batch: list[tuple[str, str, int]]) -> _Job:
        keys, ids = [b[0] for b in batch], [b[1] for b in batch]
        chunks = self.idx.chunks(ids)
        texts = [chunks[i].embed_text() for i in ids]
        return _Job(keys, chunks[ids[-1]].path, self._ahead.submit(self.embedder.embed_documents, texts))

    def _write(self, job: _Job | None) -> None:
        """Commit one embedded batch (``Index.add_vectors``), on the caller's thread."""
        if job is None:
            return
        self.idx.add_vectors(dict(zip(job.keys, job.vectors.result())))
        self.made += len(job.keys)
        if self._shown is not None:
            start, waiting = self._shown
            done = self.made - start
            report_progress(self.progress, "Embedding", min(done, waiting), waiting,
                            note=f"{done} vectors", item=job.path)
