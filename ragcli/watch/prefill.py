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
before the next step. A changed index is listed again, the edited note first; the other
notes' chunks are not split again (their ids say their text is the same) and passages known
to be cached are not looked up again, so a note saved every few seconds costs little.
"""

from __future__ import annotations

import logging

from ..retrieve.passages import evidence_passages
from ..retrieve.tails import as_read, sections_as_read
from ..store.passages import open_passages

BATCH = 32  # passages embedded per step
LIST_CHUNKS = 64  # chunks whose passages one step lists
PAUSE = 0.02  # seconds between two steps: a request waiting for the models takes them
LOOKUP_BATCHES = 16  # batches one step may find cached before it returns (all cached: cheap)
CAP = 30_000

log = logging.getLogger("ragcli.watch")


class PassagePrefill:
    """``step()`` until ``done``; ``restart()`` when the index changed; ``progress()`` for status."""

    def __init__(self, index, embedder, index_dir):
        self.index = index
        self.embedder = embedder
        self.cache = open_passages(index_dir, embedder)
        self.embedded = 0  # passages this watcher embedded
        self._told = False  # the first "ready" is logged at INFO, those after a change at DEBUG
        self._memo: dict[str, list[str]] = {}  # chunk id -> its passages (ids change with the text)
        self._confirmed: set[str] = set()  # passages known to be in the cache
        self.restart()

    def close(self) -> None:
        self.cache.close()

    def restart(self) -> None:
        """List anew; what was listed or confirmed before is remembered, so after an edit only
        the edited note's chunks are split and only its new passages looked up."""
        self._ids: list[str] | None = None  # chunk ids, newest notes first, once read
        self._listed = 0  # chunks whose passages are listed
        self._texts: dict[str, None] = {}  # passages to have in the cache, in order
        self._todo: list[str] = []  # of them, those not confirmed yet, once listing ended
        self._next = 0  # the next of _todo to look up
        self.total = 0
        self.held = False  # chunks wait for their vectors (a failed run): searches need those first
        self.failed = False

    @property
    def listing(self) -> bool:
        return self._ids is None or (self._listed < len(self._ids) and len(self._texts) < CAP)

    @property
    def done(self) -> bool:
        return self.held or self.failed or (not self.listing and self._next >= len(self._todo))

    @property
    def ready(self) -> int:
        """Passages found in the cache or embedded into it."""
        return self.total - (len(self._todo) - self._next)

    def progress(self) -> dict:
        if self.held:
            return {"state": "waiting for vectors", "ready": 0, "total": None}
        if self.listing:
            return {"state": "listing", "ready": 0, "total": None}
        return {"state": "done" if self.done else "filling", "ready": self.ready, "total": self.total}

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
            log.log(logging.DEBUG if self._told else logging.INFO,
                    "passages ready for questions: %d (%d embedded)", self.ready, self.embedded)
            self._told = True

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
        """Split up to LIST_CHUNKS chunks not split before; the remembered ones cost nothing."""
        window = self._ids[self._listed:self._listed + 8 * LIST_CHUNKS]
        unknown = [i for i in window if i not in self._memo][:LIST_CHUNKS]
        chunks = self.index.chunks(unknown) if unknown else {}
        sections = sections_as_read(self.index)  # as a question reads them (``retrieve.tails``)
        for i in unknown:
            self._memo[i] = evidence_passages([as_read(chunks[i], sections)]) if i in chunks else []
        for i in window:
            if i not in self._memo or not self.listing:
                break
            self._texts.update((t, None) for t in self._memo[i][:CAP - len(self._texts)])
            self._listed += 1
        if not self.listing:
            self._memo = {i: self._memo[i] for i in self._ids[:self._listed]}  # deleted chunks go
            self._confirmed &= self._texts.keys()
            self._todo = [t for t in self._texts if t not in self._confirmed]
            self.total = len(self._texts)

    def _fill_some(self) -> None:
        """Embed the next batch the cache lacks; batches it has cost one lookup each."""
        for _ in range(LOOKUP_BATCHES):
            batch = self._todo[self._next:self._next + BATCH]
            if not batch:
                return
            missing = self.cache.vectors(batch, self.embedder)[1]
            self.embedded += len(missing)
            self._confirmed.update(batch)
            self._next += len(batch)
            if missing:
                return


def prefill_wanted(config) -> bool:
    """``auto`` is off with an embedding server (``embed_url``): each passage would be a
    request to it, which a hosted API bills; ``on`` asks for it there too."""
    return config.watch_prefill == "on" or (config.watch_prefill == "auto" and not config.embed_url)


def start_prefill(config, indexer) -> PassagePrefill | None:
    """The watcher's pre-fill, or None when it is not wanted or the embedder did not load."""
    if not prefill_wanted(config):
        return None
    try:
        return PassagePrefill(indexer.idx, indexer.embedder(), config.index_dir)
    except Exception:
        log.warning("passages are not embedded ahead of questions", exc_info=True)
        return None

