"""ragcli: local-first retrieval-augmented generation over your own notes.

The Python API is one object, ``Notes`` (``ragcli.library``): index, search, ask, chat.
It is imported on first use, so that ``import ragcli.cli`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = ["Notes", "__version__"]

if TYPE_CHECKING:
    from .library import Notes


def __getattr__(name: str):
    if name == "Notes":
        from .library import Notes

        return Notes
    raise AttributeError(f"module 'ragcli' has no attribute {name!r}")
