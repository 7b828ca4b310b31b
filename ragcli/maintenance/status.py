"""What the index holds (for `rag status` and `rag doctor`), read without taking the write lock."""

from __future__ import annotations

import json

from ..config import Config
from ..store import LOCK_NAME, WATCH_STATE, Index, index_exists, read_holder


def index_status(config: Config) -> dict:
    info: dict = {"index_dir": str(config.index_dir), "exists": index_exists(config), "roots": [],
                  "files": 0, "chunks": 0, "embedding_model": None, "index_bytes": 0,
                  "last_indexed": None, "writer": None, "watcher": None}
    if not info["exists"]:
        return info
    idx = Index.open_reader(config)
    try:
        files, chunks = idx.counts()
        fingerprint = idx.fingerprint() or {}
        info.update(roots=idx.roots(), files=files, chunks=chunks,
                    embedding_model=fingerprint.get("embedding_model"), dim=fingerprint.get("dim"),
                    chunker=fingerprint.get("chunker"), index_bytes=idx.size_bytes(),
                    last_indexed=idx.last_indexed())
        if config.chroma_url:  # where the vectors are (the server is not contacted)
            info["chroma_server"] = {"url": config.chroma_url, "collection": idx.collection()}
    finally:
        idx.close()
    holder = read_holder(config.index_dir / LOCK_NAME)
    info["writer"] = holder
    if holder and holder.get("role") == "watch":
        info["watcher"] = _watch_state(config) or {"pid": holder.get("pid"), "since": holder.get("since")}
    return info


def _watch_state(config: Config) -> dict | None:
    try:
        return json.loads((config.index_dir / WATCH_STATE).read_text())
    except (OSError, json.JSONDecodeError):
        return None
