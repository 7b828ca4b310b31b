"""Recovery and repair of an index: the operations that put its parts back in step.

A mixin of ``Index`` (it uses the index's manifest, vector store and folder): kept apart
because these run rarely (after a crash, or for `rag verify --repair`) and are where the
write protocol's guarantees are restored, not where everyday writes happen.
"""

from __future__ import annotations

import os
import shutil
import time

from .paths import CHROMA_NAME
from .recovery import forget_chroma_clients, remove_leftovers, swap_dirs, vectors_open_in_child


class Repairs:
    def recover(self) -> None:
        """Bring Chroma back in step with the manifest after a run that was killed mid-write."""
        remove_leftovers(self.dir)
        if self._m.get_meta("vectors_dirty", "0") != "1":
            return
        if not self.config.chroma_url and not vectors_open_in_child(self.dir / CHROMA_NAME):
            self._move_broken_chroma()
            self.rebuild_vectors()
            return
        self.sync_vectors()
        self._m.set_meta("vectors_dirty", "0")

    def _move_broken_chroma(self) -> None:
        """Set a store that does not open aside (only the latest one is kept, for a bug report)."""
        path = self.dir / CHROMA_NAME
        self._vectors = None
        forget_chroma_clients()
        if path.exists():
            for old in self.dir.glob(f"{CHROMA_NAME}.broken-*"):
                shutil.rmtree(old, ignore_errors=True)
            shutil.move(str(path), str(self.dir / f"{CHROMA_NAME}.broken-{int(time.time())}"))

    def sync_vectors(self) -> tuple[int, int]:
        """Make Chroma hold exactly the manifest's chunks; returns (written, deleted)."""
        from .sync import sync_into

        written, deleted, _lost = sync_into(self._m, self._dim(), self.vectors)
        return written, deleted

    def rebuild_vectors(self) -> list[str]:
        """Build Chroma afresh from the manifest's cache in a new folder, then swap it in.

        Until the swap the live store is untouched; ``vectors_dirty`` stays set throughout, so
        a crash at any point leaves something ``recover`` finishes. Returns the files
        forgotten because a vector was not cached (they need indexing again).
        """
        from .sync import sync_into

        self._m.set_meta("vectors_dirty", "1")
        self.in_write = True
        try:
            if self.config.chroma_url:
                self.vectors.reset()
                _written, _deleted, lost = sync_into(self._m, self._dim(), self.vectors)
            else:
                from .vectors import ChromaStore

                self._vectors = None
                forget_chroma_clients()
                live = self.dir / CHROMA_NAME
                fresh = self.dir / f"{CHROMA_NAME}.new-{os.getpid()}"
                shutil.rmtree(fresh, ignore_errors=True)
                store = ChromaStore.persistent(fresh)
                _written, _deleted, lost = sync_into(self._m, self._dim(), store)
                del store
                forget_chroma_clients()  # stops Chroma's system: its files are closed before the swap
                swap_dirs(fresh, live)
                shutil.rmtree(fresh, ignore_errors=True)  # now the old store, if there was one
            self._m.set_meta("vectors_dirty", "0")
        finally:
            self.in_write = False
        return lost

    def rebuild_keywords(self) -> None:
        """Index every chunk row again into the keyword index, the way the insert trigger does."""
        self._m.rebuild_keywords()

    def drop_orphan_chunks(self) -> int:
        """Chunk rows of files the manifest does not list; returns how many were dropped."""
        return self._m.drop_orphan_chunks()
