"""Model files already checked and hashed, remembered between processes.

Every command that embeds (a one-off `rag search` too) names its model by the sha256 of
the file (``embed.model_id_for``) and checks its GGUF header first (``models.gguf``). For
the 46 MB MiniLM that was 0.07-0.2 s of hashing and 0.04-0.1 s of header parsing in each
new process, for a file that had not changed. A file is remembered by its resolved path,
size, mtime and inode: any rewrite of it (a new conversion, a download, a copy over it)
changes one of those, and it is checked and hashed again. A cache that cannot be read or
written is no cache: nothing fails for it.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from ..config import write_private

CACHE_NAME = "known-models.json"
_MAX_ENTRIES = 64


def _key(path: Path) -> tuple[str, str]:
    stat = path.stat()
    return str(path.resolve()), f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ino}"


def _load(cache_dir: Path) -> dict:
    try:
        data = json.loads((cache_dir / CACHE_NAME).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def known_digest(path: Path, cache_dir: Path | None) -> str | None:
    """The sha256 remembered for this very file (checked as a sane GGUF then), or None."""
    if cache_dir is None:
        return None
    try:
        name, stamp = _key(path)
    except OSError:
        return None
    entry = _load(cache_dir).get(name)
    if isinstance(entry, dict) and entry.get("stamp") == stamp and isinstance(entry.get("sha256"), str):
        return entry["sha256"]
    return None


def remember_digest(path: Path, digest: str, cache_dir: Path | None) -> None:
    """Remember a file that was checked and hashed (written whole or not at all)."""
    if cache_dir is None:
        return
    with contextlib.suppress(OSError):
        name, stamp = _key(path)
        data = _load(cache_dir)
        data.pop(name, None)
        data[name] = {"stamp": stamp, "sha256": digest}
        data = dict(list(data.items())[-_MAX_ENTRIES:])
        cache_dir.mkdir(parents=True, exist_ok=True)
        write_private(cache_dir / CACHE_NAME, json.dumps(data))
