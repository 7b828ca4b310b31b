"""``Closing``: ``with x:`` for what holds something to let go (an index, models, a worker)."""

from __future__ import annotations

from typing import Self


class Closing:
    """Closed at the end of a ``with`` block; a subclass says what ``close`` lets go of."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
