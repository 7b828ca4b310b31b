"""`rag index`, `rag search`, `rag status`."""

from __future__ import annotations

from ..app import app  # noqa: F401  (commands are added as the pipeline lands)
