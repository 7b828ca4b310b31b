"""What the index holds (for `rag status` and `rag doctor`), read without taking the write lock,
and the running watcher: asked over its socket, else read from the files it keeps."""

from __future__ import annotations

from ..config import Config
from ..store import LOCK_NAME, Index, index_exists, read_holder


def index_status(config: Config) -> dict:
    info: dict = {"index_dir": str(config.index_dir), "exists": index_exists(config), "roots": [],
                  "files": 0, "chunks": 0, "embedding_model": None, "index_bytes": 0,
                  "last_indexed": None, "writer": None, "watcher": None}
    if not info["exists"]:
        return info
    with Index.open_reader(config) as idx:
        files, chunks = idx.counts()
        fingerprint = idx.fingerprint() or {}
        info.update(roots=idx.roots(), files=files, chunks=chunks,
                    embedding_model=fingerprint.get("embedding_model"), dim=fingerprint.get("dim"),
                    chunker=fingerprint.get("chunker"), index_bytes=idx.size_bytes(),
                    last_indexed=idx.last_indexed())
        info["vectors_pending"] = idx.pending_counts()[0]
        if config.chroma_url:  # where the vectors are (the server is not contacted)
            info["chroma_server"] = {"url": config.chroma_url, "collection": idx.collection()}
    holder = read_holder(config.index_dir / LOCK_NAME)
    info["writer"] = holder
    # phase two of `rag index` (or of the watcher) embeds what phase one wrote; with no writer
    # left, a run was stopped there and the next one resumes it
    info["phase"] = ("complete" if not info.get("vectors_pending")
                     else "embedding" if holder else "embedding interrupted")
    info["watcher"] = watcher_info(config, holder)
    return info


def watcher_info(config: Config, holder: dict | None = None) -> dict | None:
    """The running watcher (pid, since, roots, state, pending, socket, log, ...), or None.

    ``answering``: its socket answered just now (then the figures are its own, live, with
    ``requests`` served so far); otherwise they come from its state file."""
    from ..serve.client import daemon_status

    if holder is None:
        holder = read_holder(config.index_dir / LOCK_NAME)
    if not holder or holder.get("role") != "watch":
        return None
    live = daemon_status(config, timeout=1.0)
    if live and live.get("pid") == holder.get("pid"):
        return {**live, "answering": True}
    from ..watch.files import read_state

    state = read_state(config) or {}
    if state.get("pid") != holder.get("pid"):
        state = {"pid": holder.get("pid"), "since": holder.get("since")}
    return {**state, "answering": False}



def passages_line(progress: dict) -> str:
    """The watcher's pre-fill of the passage cache, for a person ("4,200 of 9,875 ready")."""
    if progress.get("total") is None:
        return f"{progress.get('state', '?')} (embedded ahead of questions when idle)"
    return f"{progress['ready']:,} of {progress['total']:,} ready for questions"
