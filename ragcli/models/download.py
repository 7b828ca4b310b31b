"""`rag models pull`: fetch a GGUF file, resumably, and check it. Only ever on request.

- Names: ``hf://owner/repo/path/file.gguf`` or ``owner/repo:path/file.gguf`` map to
  ``{HF_ENDPOINT or https://huggingface.co}/owner/repo/resolve/main/path/file.gguf``
  (``@revision`` after the repo picks another revision); ``http(s)://`` URLs are used as is.
- The bytes go to ``NAME.part`` next to the destination; an interrupted download resumes
  with an HTTP Range request (from this run's retries or a later run).
- The result is checked against ``--sha256`` when given, else against a sha256 the server
  announces (Hugging Face's ``X-Linked-Etag``, or an ETag that is a 64-hex digest), then
  checked to be a whole GGUF file, and only then renamed into place.

Never prints: progress reaches the caller as ``Progress`` events (task "Downloading", bytes).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ..config import write_private
from ..errors import DownloadError, UsageError
from ..progress import ProgressFn, report

HF_ENDPOINT = "https://huggingface.co"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Remote:
    url: str
    filename: str


def resolve_name(name: str, env: dict[str, str] | None = None) -> Remote:
    """Turn a model name or URL into the URL to fetch and the local file name."""
    env = dict(os.environ if env is None else env)
    name = name.strip()
    endpoint = (env.get("HF_ENDPOINT") or HF_ENDPOINT).rstrip("/")
    if name.startswith(("http://", "https://")):
        path = urlsplit(name).path
        filename = unquote(path.rsplit("/", 1)[-1])
        if not filename:
            raise UsageError(f"cannot tell a file name from {name!r}",
                             hint="Give a URL that ends in the file name, e.g. .../model.gguf")
        return Remote(name, _safe_filename(filename))
    if name.startswith("hf://"):
        parts = name[len("hf://"):].split("/")
        if len(parts) < 3 or not all(parts):
            raise UsageError(f"expected hf://owner/repo/file.gguf, got {name!r}")
        owner, repo, file_path = parts[0], parts[1], "/".join(parts[2:])
    elif ":" in name and "/" in name.split(":", 1)[0]:
        repo_part, file_path = name.split(":", 1)
        owner, _, repo = repo_part.partition("/")
        if not owner or not repo or not file_path or "/" in repo.split("@")[0]:
            raise UsageError(f"expected owner/repo:file.gguf, got {name!r}")
    else:
        from .catalog import CATALOG

        raise UsageError(f"not a model name or URL: {name!r}",
                         hint="Use a known name (" + ", ".join(sorted(CATALOG)[:6]) + ", ... see "
                              "`rag models --catalog`), hf://owner/repo/file.gguf, owner/repo:file.gguf "
                              "or an https:// URL.")
    repo, _, revision = repo.partition("@")
    url = (f"{endpoint}/{quote(owner)}/{quote(repo)}/resolve/{quote(revision or 'main', safe='')}/"
           f"{quote(file_path)}")
    return Remote(url, _safe_filename(file_path.rsplit("/", 1)[-1]))


def _safe_filename(name: str) -> str:
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    if name in ("", ".", "..") or name.startswith(".") or "\x00" in name:
        raise UsageError(f"unsafe file name {name!r}")
    return name


def announced_sha256(headers) -> str | None:
    """A sha256 the server vouches for: X-Linked-Etag (LFS files on HF) or a digest ETag."""
    for key in ("X-Linked-Etag", "ETag"):
        value = headers.get(key)
        if value:
            value = value.strip()
            if value.startswith("W/"):
                continue  # a weak ETag says nothing about the bytes
            value = value.strip('"').lower()
            if _SHA256.match(value):
                return value
    return None


def _sha256_file(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def download(url: str, dest: Path, *, sha256: str | None = None, on_progress: ProgressFn | None = None,
             retries: int = 3, timeout: float = 30.0) -> Path:
    """Fetch ``url`` into ``dest`` via ``dest.part``, resuming and checking. Returns ``dest``."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    want = sha256.lower().strip() if sha256 else None
    if want is not None and not _SHA256.match(want):
        raise UsageError(f"--sha256 must be 64 hex digits, got {sha256!r}")
    announced: str | None = None
    total: int | None = None
    attempt = 0
    while True:
        try:
            announced, total = _fetch(url, part, on_progress, timeout) or (announced, total)
            break
        except _Transient as exc:
            attempt += 1
            if attempt > retries:
                raise DownloadError(f"download of {url} failed after {retries} retries: {exc}",
                                    hint=f"Run the same command again: it resumes from {part.name}.") from None
            time.sleep(min(0.2 * 2 ** attempt, 5.0))
    expected = want or announced
    if expected is not None:
        got = _sha256_file(part)
        if got != expected:
            part.unlink(missing_ok=True)
            source = "--sha256" if want else "the server's checksum"
            raise DownloadError(f"checksum mismatch for {dest.name}: got {got}, expected {expected} ({source})",
                                hint="The partial file was removed; check the checksum or the source and try again.")
    from ..errors import ModelError
    from .gguf import read_gguf_info

    try:
        read_gguf_info(part)
    except ModelError as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{dest.name} is not a usable GGUF file: {exc}",
                            hint="Check that the name or URL points at a .gguf file.") from None
    os.replace(part, dest)
    return dest


class _Transient(Exception):
    """A failure worth retrying (dropped connection, timeout, 5xx)."""


def _fetch(url: str, part: Path, on_progress: ProgressFn | None, timeout: float):
    """One request: append to ``part`` from where it stops. Returns (announced sha256, total)."""
    import httpx

    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "ragcli", "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        # Hugging Face answers /resolve/ with a redirect to its CDN.
        with httpx.stream("GET", url, headers=headers, timeout=timeout, follow_redirects=True) as resp:
            return _receive(resp, url, part, have, on_progress)
    except httpx.ConnectError as exc:  # refused, no route, no such host: retrying will not help
        raise DownloadError(f"cannot reach {urlsplit(url).netloc}: {exc}") from None
    except httpx.TransportError as exc:  # timed out, reset
        raise _Transient(f"{type(exc).__name__}: {exc}") from None


def _receive(resp, url: str, part: Path, have: int, on_progress: ProgressFn | None):
    import httpx

    status = resp.status_code
    if status == 416 and have:  # asked past the end: the part holds the whole file
        total = _total_from_content_range(resp.headers.get("Content-Range"))
        if total is None or total == have:
            return announced_sha256(resp.headers), have
        part.unlink(missing_ok=True)  # longer than the file: start again
        raise _Transient("partial file longer than the remote file")
    if status >= 500 or status == 429:
        raise _Transient(f"HTTP {status}")
    if status >= 400:
        raise DownloadError(f"cannot download {url}: HTTP {status} {resp.reason_phrase}",
                            hint="Check the name or URL (and that the file exists at that revision).")
    announced = announced_sha256(resp.headers)
    if status == 206:
        total = _total_from_content_range(resp.headers.get("Content-Range"))
        start = _start_from_content_range(resp.headers.get("Content-Range"))
        if start != have:
            raise DownloadError(f"the server resumed at byte {start}, not {have}")
        mode = "ab"
    else:  # 200: the server ignored Range (or there was nothing to resume)
        length = resp.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        have, mode = 0, "wb"
    report(on_progress, "Downloading", have, total)
    try:
        with part.open(mode) as handle:
            for block in resp.iter_raw():  # as received: a chunk size would buffer, and lose it on a drop
                handle.write(block)
                have += len(block)
                report(on_progress, "Downloading", have, total)
    except (OSError, httpx.TransportError) as exc:
        raise _Transient(f"connection dropped at byte {have}: {exc}") from None
    if total is not None and have < total:
        raise _Transient(f"connection dropped at byte {have} of {total}")
    if total is not None and have > total:
        part.unlink(missing_ok=True)
        raise _Transient("received more bytes than announced")
    return announced, total


def _total_from_content_range(value: str | None) -> int | None:
    m = re.match(r"bytes (?:\d+-\d+|\*)/(\d+)", value or "")
    return int(m.group(1)) if m else None


def _start_from_content_range(value: str | None) -> int | None:
    m = re.match(r"bytes (\d+)-", value or "")
    return int(m.group(1)) if m else None


def pull(name: str, models_dir: Path, *, sha256: str | None = None, filename: str | None = None,
         on_progress: ProgressFn | None = None, force: bool = False) -> Path:
    """Download a model by name or URL into ``models_dir``; an existing file is kept unless
    ``force`` (and is checked against ``sha256`` when one is given)."""
    from .catalog import lookup

    known = lookup(name)
    if known is not None:  # a curated short name: the official file, its pinned sha256
        remote = resolve_name(f"hf://{known.repo}/{known.file}")
        sha256 = sha256 or known.sha256
    else:
        remote = resolve_name(name)
    dest = Path(models_dir) / _safe_filename(filename or remote.filename)
    if dest.exists() and not force:
        if sha256 and _sha256_file(dest) != sha256.lower():
            raise DownloadError(f"{dest} exists with another checksum",
                                hint="Use --force to download it again.")
        return dest
    from ..config import ensure_private_dir

    ensure_private_dir(Path(models_dir))
    return download(remote.url, dest, sha256=sha256, on_progress=on_progress)


def set_model_in_config(config_file: Path, role: str, path: Path) -> None:
    """Point ``embed_model`` or ``llm_model`` at ``path`` in config.toml, keeping the rest."""
    key = {"embed": "embed_model", "llm": "llm_model"}.get(role)
    if key is None:
        raise UsageError(f"--set takes embed or llm, got {role!r}")
    config_file = Path(config_file)
    text = config_file.read_text(encoding="utf-8") if config_file.exists() else ""
    value = str(path).replace("\\", "\\\\").replace('"', '\\"')
    line = f'{key} = "{value}"'
    pattern = re.compile(rf"^[ \t]*{key}[ \t]*=.*$", re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _m: line, text, count=1)
    else:
        text = (text.rstrip("\n") + "\n" if text.strip() else "") + line + "\n"
    config_file.parent.mkdir(parents=True, exist_ok=True)
    write_private(config_file, text)
