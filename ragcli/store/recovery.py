"""Keeping a Chroma folder sound across crashes: probing it in a child process, swapping a
rebuilt folder in atomically, and clearing what killed runs left behind."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..config import Config
from ..errors import StoreError
from .lock import WriteLock
from .paths import CHROMA_NAME, LOCK_NAME, MANIFEST_NAME

T = TypeVar("T")


def forget_chroma_clients() -> None:
    """Drop Chroma's cached clients: it keeps one system per path, so a reader must drop it to
    see another process's writes, and a folder swap needs its files closed first. A failure
    here would make the swap unsafe, so it is an error, never swallowed."""
    if "chromadb" not in sys.modules:  # never opened in this process: nothing is cached
        return
    from chromadb.api.client import SharedSystemClient

    try:
        SharedSystemClient.clear_system_cache()
    except Exception as exc:  # noqa: BLE001 - chromadb raises many types
        raise StoreError(f"cannot close the vector store's clients: {exc}",
                         hint="Run the command again; if it persists, run rag verify --repair.") from None


def remove_leftovers(index_dir: Path) -> None:
    """Folders a rebuild killed half-way left behind (only called with the write lock held)."""
    for pattern in (f"{CHROMA_NAME}.new-*", f"{CHROMA_NAME}.old-*"):
        for path in index_dir.glob(pattern):
            shutil.rmtree(path, ignore_errors=True)


def move_aside(path: Path) -> None:
    """Set a store that does not open aside as ``chroma.broken-<time>`` (only the latest is kept)."""
    if path.exists():
        for old in path.parent.glob(f"{path.name}.broken-*"):
            shutil.rmtree(old, ignore_errors=True)
        shutil.move(str(path), str(path.with_name(f"{path.name}.broken-{int(time.time())}")))


def rebuild_folder(index_dir: Path, fill: Callable[[object], T]) -> T:
    """Build a Chroma store in a new folder with ``fill(store)``, then swap it in atomically.

    Until the swap the live store is untouched; a crash leaves a ``chroma.new-*`` folder that
    ``remove_leftovers`` clears. Returns what ``fill`` returned."""
    from .vectors import ChromaStore

    forget_chroma_clients()
    live = index_dir / CHROMA_NAME
    fresh = index_dir / f"{CHROMA_NAME}.new-{os.getpid()}"
    shutil.rmtree(fresh, ignore_errors=True)
    store = ChromaStore.persistent(fresh)
    result = fill(store)
    del store
    forget_chroma_clients()  # stops Chroma's system: its files are closed before the swap
    swap_dirs(fresh, live)
    shutil.rmtree(fresh, ignore_errors=True)  # now the old store, if there was one
    return result


def swap_dirs(fresh: Path, live: Path) -> None:
    """Put ``fresh`` at ``live``; the old ``live`` (if any) ends up at ``fresh``.

    One atomic renameat2(RENAME_EXCHANGE) on Linux; elsewhere three renames, and a crash
    between them leaves no store at ``live``, which recovery rebuilds from the cache.
    """
    if not live.exists():
        os.rename(fresh, live)
        return
    if _exchange(fresh, live):
        return
    old = live.with_name(f"{CHROMA_NAME}.old-{os.getpid()}")
    os.rename(live, old)
    os.rename(fresh, live)
    os.rename(old, fresh)


def _exchange(a: Path, b: Path) -> bool:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


_PROBE = """
import os, sys
os.environ["ANONYMIZED_TELEMETRY"] = "False"
import chromadb
from chromadb.config import Settings
c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
for col in c.list_collections():
    col = c.get_collection(col.name if hasattr(col, "name") else col)
    n = col.count()
    if n:
        got = col.get(limit=1, include=["embeddings"])
        col.query(query_embeddings=got["embeddings"][:1], n_results=min(3, n))
print("ok")
"""


def vectors_open_in_child(path: Path, timeout: float = 60.0) -> bool:
    """Does the Chroma store at ``path`` open and answer a query? Asked in a child process."""
    if not path.exists():
        return True
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0 and proc.stdout.strip().endswith("ok")


def set_aside_damaged(config: Config) -> tuple[Path, list[str]]:
    """Move a damaged manifest (and its Chroma folder) aside so an index can be built anew.

    Returns where they went and the roots the damaged manifest still names, if readable.
    """
    roots = _roots_of_damaged(config.index_dir / MANIFEST_NAME)
    aside = config.index_dir / f"damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    with WriteLock(config.index_dir / LOCK_NAME, "verify"):  # no writer may have it open
        aside.mkdir(mode=0o700)
        for name in (MANIFEST_NAME, MANIFEST_NAME + "-wal", MANIFEST_NAME + "-shm", CHROMA_NAME):
            if (config.index_dir / name).exists():
                os.rename(config.index_dir / name, aside / name)
    return aside, roots


def _roots_of_damaged(path: Path) -> list[str]:
    import json
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'roots'").fetchone()
            return list(json.loads(row[0])) if row else []
    except (sqlite3.DatabaseError, ValueError, TypeError):
        return []
