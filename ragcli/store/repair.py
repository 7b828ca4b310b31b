"""Recovery and repair of an index: the operations that put its parts back in step.

A mixin of ``Index`` (it uses the index's manifest, vector store and folder): kept apart
because these run rarely (after a crash, or for `rag verify --repair`) and are where the
write protocol's guarantees are restored, not where everyday writes happen.
"""

from __future__ import annotations

from .notes import fill_missing_centroids
from .paths import CHROMA_NAME
from .recovery import (
    forget_chroma_clients,
    move_aside,
    rebuild_folder,
    remove_leftovers,
    vectors_open_in_child,
)


class Repairs:
    def recover(self) -> None:
        """Bring Chroma back in step with the manifest after a run that was killed mid-write."""
        remove_leftovers(self.dir)
        if self._m.get_meta("vectors_dirty", "0") != "1":
            return
        if not self.config.chroma_url and not vectors_open_in_child(self.dir / CHROMA_NAME):
            self.drop_vectors()
            forget_chroma_clients()
            move_aside(self.dir / CHROMA_NAME)  # the latest broken store is kept, for a bug report
            self.rebuild_vectors()
            return
        self._caught_up = True  # the sync below is the catch-up
        self.sync_vectors()
        self._m.set_meta("vectors_dirty", "0")

    def sync_vectors(self) -> tuple[int, int]:
        """Make Chroma hold exactly the manifest's chunks; returns (written, deleted)."""
        from .sync import sync_into

        written, deleted, _lost = sync_into(self._m, self._dim(), self.vectors)
        return written, deleted

    def rebuild_vectors(self) -> list[str]:
        """Build Chroma afresh from the manifest's cache in a new folder, then swap it in (on a
        server: empty the index's collection and fill it again from the cache).

        Until the swap the live store is untouched; ``vectors_dirty`` stays set throughout, so
        a crash at any point leaves something ``recover`` finishes. Returns the files
        forgotten because a vector was not cached (they need indexing again).
        """
        from .sync import sync_into

        self._m.set_meta("vectors_dirty", "1")
        self.in_write = True
        try:
            if self.config.chroma_url:
                self._caught_up = True  # no catch-up sync before a reset
                self.vectors.reset()
                _written, _deleted, lost = sync_into(self._m, self._dim(), self.vectors)
            else:
                self.drop_vectors()
                _written, _deleted, lost = rebuild_folder(
                    self.dir, lambda fresh: sync_into(self._m, self._dim(), fresh))
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

    def fill_centroids(self) -> int:
        """Compute the missing note centroids from the vector cache; returns how many."""
        return fill_missing_centroids(self._m.db, self._dim())
