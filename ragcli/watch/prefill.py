"""The watcher's idle work: embed evidence passages ahead of the questions that need them.

Embedding the candidate passages is most of a new question's time to its first quote
(bench/ISSUE19.md, "First quote"); ``store.passages`` keeps them beside the index, so a
one-off ``rag ask`` reads what was embedded before. Idle, the watcher fills that cache note
by note, the most recently modified notes first (the ones a user is most likely to ask
about), up to ``CAP`` passages (half the cache's own limit, so questions' rows still fit).

The work comes in steps the watcher's loop runs one at a time, only while nothing is
pending: listing the passages of ``LIST_CHUNKS`` chunks, or embedding ``BATCH`` passages
that are not in the cache yet. A change that arrives waits for the step in hand at most
(one batch: a fraction of a second to about a second on a loaded CPU), then is synced
before the next step. A changed index starts the listing again (the edited note first);
what is cached already costs a lookup, not an embedding.
"""

from __future__ import annotations

import logging

from ..retrieve.evidence import evidence_passages
from ..store.passages import open_passages

BATCH = 32  # passages embedded per step
LIST_CHUNKS = 64  # chunks whose passages one step lists
PAUSE = 0.02  # seconds between two steps: a request waiting for the models takes them
LOOKUP_BATCHES = 16  # batches one step may find cached before it returns (all cached: cheap)
CAP = 30_000

log = logging.getLogger("ragcli.watch")


class PassagePrefill:
    """``step()`` until ``done``; ``restart()`` when the index changed; ``progress()`` for status."""

    def __init__(self, index, embedder, index_dir, cap: int = CAP):
        self.index = index
        self.embedder = embedder
        self.cache = open_passages(index_dir, embedder)
        self.cap = cap
        self.restart()

    def close(self) -> None:
        self.cache.close()

    def restart(self) -> None:
        self._ids: list[str] | None = None  # chunk ids, newest notes first, once read
        self._listed = 0  # chunks whose passages are listed
        self._texts: dict[str, None] = {}  # passages to have in the cache, in order
        self._order: list[str] = []  # the same, as a list, once listing ended
        self.ready = 0  # passages found in the cache or embedded into it
        self.embedded = 0  # of them, embedded by this watcher
        self.held = False  # chunks wait for their vectors (a failed run): searches need those first
        self.failed = False

    @property
    def listing(self) -> bool:
        return self._ids is None or (self._listed < len(self._ids) and len(self._texts) < self.cap)

    @property
    def done(self) -> bool:
        return self.held or self.failed or (not self.listing and self.ready >= len(self._order))

    def progress(self) -> dict:
        if self.held:
            return {"state": "waiting for vectors", "ready": 0, "total": None}
        if self.listing:
            return {"state": "listing", "ready": 0, "total": None}
        return {"state": "done" if self.done else "filling", "ready": self.ready, "total": len(self._order)}

    def wanted(self, pending: int) -> bool:
        """Whether to take a step now: nothing pending, passages left."""
        return not pending and not self.done

    def after_run(self, report) -> None:
        """A sync or reconcile ended: a changed index is listed anew, the edited notes first."""
        if report.files_indexed or report.files_removed or self.held:
            self.restart()

    def step(self, engine=None) -> None:
        """One step, unless a socket request holds the models (``engine.lock``): the request
        goes first. A failure ends the pre-fill (a question then embeds, as without it)."""
        lock = engine.lock if engine is not None else None
        if lock is not None and not lock.acquire(blocking=False):
            return
        try:
            self._step()
        except Exception:
            log.warning("embedding passages ahead of questions failed; stopped", exc_info=True)
            self.failed = True
        finally:
            if lock is not None:
                lock.release()
        if self.done and not self.held and not self.failed:
            log.info("passages ready for questions: %d (%d embedded)", self.ready, self.embedded)

    def _step(self) -> None:
        """One bounded piece of work (see the module docstring)."""
        if self._ids is None:
            self.held = self.index.pending_counts()[0] > 0
            if not self.held:
                self._ids = self.index.chunk_ids_newest_first()
        elif self.listing:
            self._list_some()
        else:
            self._fill_some()

    def _list_some(self) -> None:
        part = self._ids[self._listed:self._listed + LIST_CHUNKS]
        chunks = self.index.chunks(part)
        for text in evidence_passages(chunks[i] for i in part if i in chunks):
            if len(self._texts) >= self.cap:
                break
            self._texts[text] = None
        self._listed += len(part)
        if not self.listing:
            self._order = list(self._texts)

    def _fill_some(self) -> None:
        """Embed the next batch the cache lacks; batches it has cost one lookup each."""
        dim = int(self.embedder.dim)
        for _ in range(LOOKUP_BATCHES):
            batch = self._order[self.ready:self.ready + BATCH]
            if not batch:
                return
            found = self.cache.get(batch, dim)
            missing = [t for t in batch if t not in found]
            if missing:
                self.cache.put(dict(zip(missing, self.embedder.embed(missing))))
                self.embedded += len(missing)
            self.ready += len(batch)
            if missing:
                return


def start_prefill(config, indexer) -> PassagePrefill | None:
    """The watcher's pre-fill, or None when it is turned off or the embedder did not load."""
    if config.watch_prefill == "off":
        return None
    try:
        return PassagePrefill(indexer.idx, indexer.embedder(), config.index_dir)
    except Exception:
        log.warning("passages are not embedded ahead of questions", exc_info=True)
        return None

