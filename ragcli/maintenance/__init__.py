"""Looking after an index and an installation: `rag verify`, `rag doctor`, `rag eval`, `rag status`."""
