"""The watcher's socket protocol: newline-delimited JSON, one object per line, both ways.

Requests (the socket executes these three operations and nothing else):

    {"op": "status"}
    {"op": "search", "settings": KEY, "query": "...", "k": 10, "mode": "hybrid",
     "filters": {"path": GLOB, "tag": T, "since": DATE, "until": DATE}}
    {"op": "ask", "settings": KEY, "question": "...", "top_k": 5, "mode": "hybrid",
     "min_score": -1.0, "temperature": 0.1, "max_tokens": 256, "quotes_only": false,
     "retrieval_query": "...", "context": "..."}

(``retrieval_query`` and ``context``: a chat's follow-up, rewritten to stand alone, and the
question before it; both optional.)

Responses: ``{"ok": true, ...}`` for status and search (``"results"``: hits); an ask streams
``{"started": true}``, then ``{"quotes": [...]}`` (the evidence, as soon as it is chosen and
before generation starts; none when the notes do not cover the question), then
``{"token": "..."}`` lines (never with ``quotes_only``), then ``{"answer": Answer.to_json()}``,
from which the client rebuilds the Answer (``Answer.from_json``) and prints it exactly as an
answer made in process. Hits and quotes travel as their ``to_json`` too. Anything wrong is
one ``{"error": "...", "code": "..."}`` line.

``settings`` is a digest of every setting that changes a result but is not sent with the
request (models, index folder, context size...): a client whose settings differ from the
watcher's gets ``code: "settings"`` and answers in process, so results never depend on
which way they were made. ``VERSION`` is part of the digest: a watcher started by an older
ragcli is answered "settings" rather than asked what it does not know.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
from pathlib import Path
from typing import Any

from ..config import MODES, Config

VERSION = 4  # 2: the quotes event and quotes_only; 3: one answer shape, a chat's follow-up fields; 4: nearest
SOCKET_NAME = "watch.sock"
MAX_REQUEST = 1 << 20  # bytes in one request line
MAX_TEXT = 100_000  # characters in a query or question
OPS = ("status", "search", "ask")
FILTER_KEYS = ("path", "tag", "since", "until")

# Settings an ask request carries itself (the rest must match the watcher's: ``settings_key``).
ASK_SETTINGS = {"top_k": int, "mode": str, "min_score": float, "temperature": float, "max_tokens": int}
# Settings that change no search or answer (the watcher's own, parsing limits, this switch).
_NOT_RESULTS = {"config_file", "debounce", "reconcile_interval", "parse_timeout", "parse_memory_mb",
                "max_file_mb", "daemon"}


class BadRequest(ValueError):
    """A request line the server refuses (answered with an error line, never a crash)."""


def socket_path(config: Config) -> Path:
    return config.index_dir / SOCKET_NAME


def settings_key(config: Config) -> str:
    """A digest of the settings that must be the same on both ends (secrets never leave)."""
    data = config.as_dict()
    kept = sorted((k, str(v)) for k, v in data.items() if k not in _NOT_RESULTS and k not in ASK_SETTINGS)
    kept.append(("protocol", str(VERSION)))
    return hashlib.sha256(json.dumps(kept).encode()).hexdigest()[:32]


# -- addresses ------------------------------------------------------------------------------


class Address:
    """A socket path usable with bind/connect even past AF_UNIX's ~107-byte limit (Linux:
    through an open descriptor of its folder, /proc/self/fd/N/NAME)."""

    LIMIT = 100

    def __init__(self, path: Path):
        self.path = Path(path)
        self._fd: int | None = None

    def __enter__(self) -> str:
        if len(os.fsencode(str(self.path))) <= self.LIMIT or not os.path.isdir("/proc/self/fd"):
            return str(self.path)
        self._fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        return f"/proc/self/fd/{self._fd}/{self.path.name}"

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def connect(path: Path, timeout: float) -> socket.socket:
    """A connected client socket (raises OSError: absent, refused (stale), timed out)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        with Address(path) as address:
            sock.connect(address)
        return sock
    except BaseException:
        sock.close()
        raise


# -- lines ----------------------------------------------------------------------------------


def encode(obj: dict) -> bytes:
    """One line: ASCII JSON (every non-ASCII character escaped), newline-terminated."""
    return (json.dumps(obj, ensure_ascii=True, allow_nan=False, default=str) + "\n").encode("ascii")


def _no_constants(name: str):
    raise BadRequest(f"{name} is not valid JSON here")


def decode(line: bytes) -> Any:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("a request must be UTF-8 JSON") from None
    try:
        return json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"not JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise BadRequest("JSON nested too deeply") from None


class LineReader:
    """Lines from a socket, each at most ``limit`` bytes (a longer one raises BadRequest)."""

    def __init__(self, sock: socket.socket, limit: int = MAX_REQUEST):
        self.sock, self.limit = sock, limit
        self.buf = b""

    def readline(self) -> bytes | None:
        """The next line without its newline; None at the end of the stream."""
        while True:
            end = self.buf.find(b"\n")
            if end >= 0:
                line, self.buf = self.buf[:end], self.buf[end + 1:]
                if len(line) > self.limit:
                    raise BadRequest(f"request longer than {self.limit} bytes")
                return line
            if len(self.buf) > self.limit:
                raise BadRequest(f"request longer than {self.limit} bytes")
            data = self.sock.recv(65536)
            if not data:
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line
                return None
            self.buf += data


# -- requests -------------------------------------------------------------------------------


def parse_request(line: bytes) -> dict:
    """A checked request (raises BadRequest saying what is wrong)."""
    req = decode(line)
    if not isinstance(req, dict):
        raise BadRequest("a request is a JSON object")
    op = req.get("op")
    if op not in OPS:
        raise BadRequest(f"unknown op {op!r}: this socket answers only {', '.join(OPS)}")
    if op == "status":
        return {"op": "status"}
    settings = req.get("settings")
    if not isinstance(settings, str):
        raise BadRequest("settings: a string is required")
    if op == "search":
        filters = req.get("filters") or {}
        if not isinstance(filters, dict) or set(filters) - set(FILTER_KEYS):
            raise BadRequest(f"filters: an object with only {', '.join(FILTER_KEYS)}")
        return {"op": "search", "settings": settings, "query": _text(req, "query"),
                "k": _number(req.get("k", 10), int, "k", 0, 10_000),
                "mode": _mode(req.get("mode")),
                "filters": {k: _optional_text(filters.get(k), f"filters.{k}") for k in FILTER_KEYS}}
    quotes_only = req.get("quotes_only", False)
    if not isinstance(quotes_only, bool):
        raise BadRequest("quotes_only: true or false")
    out = {"op": "ask", "settings": settings, "question": _text(req, "question"), "quotes_only": quotes_only,
           "retrieval_query": _optional_text(req.get("retrieval_query"), "retrieval_query", MAX_TEXT),
           "context": _optional_text(req.get("context"), "context", MAX_TEXT) or ""}
    for name, kind in ASK_SETTINGS.items():
        if name == "mode":
            out[name] = _mode(req.get(name))
        elif req.get(name) is not None:
            out[name] = _number(req[name], kind, name, -1e9, 1e9)
    return out


def _text(req: dict, name: str) -> str:
    value = req.get(name)
    if not isinstance(value, str):
        raise BadRequest(f"{name}: a string is required")
    if len(value) > MAX_TEXT:
        raise BadRequest(f"{name}: longer than {MAX_TEXT} characters")
    return value


def _optional_text(value, name: str, limit: int = 10_000) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise BadRequest(f"{name}: a string is required")
    return value


def _mode(value) -> str | None:
    if value is not None and value not in MODES:
        raise BadRequest(f"mode: one of {', '.join(MODES)}")
    return value


def _number(value, kind: type, name: str, low: float, high: float):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            (kind is int and not isinstance(value, int)):
        raise BadRequest(f"{name}: {'an integer' if kind is int else 'a number'} is required")
    if not math.isfinite(value) or not low <= value <= high:
        raise BadRequest(f"{name}: out of range")
    return kind(value)
