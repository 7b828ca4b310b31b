"""Recovery and repair of an index: the operations that put its parts back in step.

A part of ``Index``, given the index's settings, manifest and vector store (``live``): kept
apart because these run rarely (after a crash, or for `rag verify --repair`) and are where
the write protocol's guarantees are restored, not where everyday writes happen.
"""

from __future__ import annotations

from ..config import Config
from .live import Vectors
from .manifest import Manifest
from .notes import fill_missing_centroids
from .paths import CHROMA_NAME
from .recovery import forget_chroma_clients, move_aside, rebuild_folder, remove_leftovers, vectors_open_in_child
from .sync import sync_into


class Repairs:
    def __init__(self, config: Config, manifest: Manifest, vectors: Vectors):
        self.config = config
        self.dir = config.index_dir
        self._m = manifest
        self._vectors = vectors

    def recover(self) -> None:
        """Bring Chroma back in step with the manifest after a run that was killed mid-write."""
        remove_leftovers(self.dir)
        if self._m.get_meta("vectors_dirty", "0") != "1":
            return
        if not self.config.chroma_url and not vectors_open_in_child(self.dir / CHROMA_NAME):
            self._vectors.drop()
            forget_chroma_clients()
            move_aside(self.dir / CHROMA_NAME)  # the latest broken store is kept, for a bug report
            self.rebuild_vectors()
            return
        self._vectors.skip_catch_up()  # the sync below is the catch-up
        sync_into(self._m, self._m.dim(), self._vectors.store())
        self._m.set_meta("vectors_dirty", "0")

    def rebuild_vectors(self) -> list[str]:
        """Build Chroma afresh from the manifest's cache in a new folder, then swap it in (on a
        server: empty the index's collection and fill it again from the cache).

        Until the swap the live store is untouched; ``vectors_dirty`` stays set throughout, so
        a crash at any point leaves something ``recover`` finishes. Returns the files
        forgotten because a vector was not cached (they need indexing again).
        """
        self._m.set_meta("vectors_dirty", "1")
        if self.config.chroma_url:
            self._vectors.skip_catch_up()  # no catch-up sync before a reset
            self._vectors.store().reset()
            _written, _deleted, lost = sync_into(self._m, self._m.dim(), self._vectors.store())
        else:
            self._vectors.drop()
            _written, _deleted, lost = rebuild_folder(
                self.dir, lambda fresh: sync_into(self._m, self._m.dim(), fresh))
        self._m.set_meta("vectors_dirty", "0")
        return lost

    def fill_centroids(self) -> int:
        """Compute the missing note centroids from the vector cache; returns how many."""
        return fill_missing_centroids(self._m.db, self._m.dim())
