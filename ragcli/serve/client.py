"""Ask the running watcher first: warm search, ask and status over its Unix socket.

Each function returns None when the watcher cannot answer (no socket, a stale one left by
a killed watcher, no answer within a short time, a busy or still-starting watcher, other
settings), and the caller (``ragcli.Notes``) then does the work in its own process, with
the same result.
``config.daemon`` (``RAG_DAEMON``) says whether to try: ``auto`` (default), ``off``, or
``require`` (no fallback: a ``DaemonError`` instead; tests and benches use it to prove
which way an answer came).

Kept light (socket and json only): it runs before a command loads chromadb or a model.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Callable, Iterator

from ..config import Config
from ..errors import DaemonError
from ..types import Answer, Hit, Quote
from .protocol import BadRequest, LineReader, connect, decode, encode, settings_key, socket_path

CONNECT_TIMEOUT = 1.0  # a live watcher accepts at once; a stale socket file refuses at once
FIRST_REPLY = 3.0  # seconds to the first reply line of a search or an ask (a warm search: ~0.05)
STREAM_IDLE = 300.0  # seconds between two lines of a streamed answer (a slow model's prompt)
MAX_REPLY = 256 << 20


class _Unavailable(Exception):
    """The watcher did not answer this one; the caller works in process (or fails: require)."""


class _CallerError(Exception):
    """Raised by the caller's own callback: passed through as it is, never a fallback."""


def daemon_search(config: Config, query: str, k: int, mode: str | None,
                  filters: dict | None = None,
                  on_pending: Callable[[tuple[int, int]], None] | None = None) -> list[Hit] | None:
    """The hits ``retrieve.Searcher.search`` would give, from the watcher; None: search in process.
    ``filters``: the fields of ``retrieve.Filters`` (path, tag, since, until) as a dict.
    ``on_pending``: gets (chunks with no vector yet, all chunks) when the watcher says so."""
    request = {"op": "search", "settings": settings_key(config), "query": query, "k": k, "mode": mode,
               "filters": {key: value for key, value in (filters or {}).items() if value is not None}}

    def run() -> list[Hit]:
        reply = _one(config, request)
        hits = [Hit.from_json(h) for h in reply["results"]]
        _report_pending(reply, on_pending)
        return hits

    return _attempt(config, run)


def daemon_answer(config: Config, question: str, on_token: Callable[[str], None] | None = None,
                  on_quotes: Callable[[list[Quote]], None] | None = None,
                  quotes_only: bool = False, on_started: Callable[[], None] | None = None,
                  retrieval_query: str | None = None, context: str = "",
                  on_pending: Callable[[tuple[int, int]], None] | None = None) -> Answer | None:
    """The ``Answer`` that ``pipeline.answer`` would give, streamed from the warm watcher:
    ``on_quotes`` gets the evidence as soon as the watcher has chosen it (before generation),
    ``on_token`` the checked sentences. ``quotes_only``: `rag ask --quotes` (no model).
    ``on_started``: called once the watcher has taken the question, while it works (the CLI
    gets its terminal console ready then, not after the quotes arrive). ``retrieval_query``
    and ``context``: as ``pipeline.answer`` takes them (a chat's follow-up). ``on_pending``:
    as for ``daemon_search``.

    None: answer in process. Once the quotes or a token have reached the caller there is no
    going back: a watcher that stops mid-answer is a ``DaemonError``.
    """
    request = {"op": "ask", "settings": settings_key(config), "question": question,
               "top_k": config.top_k, "mode": config.mode, "min_score": config.min_score,
               "temperature": config.temperature, "max_tokens": config.max_tokens,
               "quotes_only": bool(quotes_only), "retrieval_query": retrieval_query, "context": context}
    streamed = []

    def deliver(callback, value) -> None:
        streamed.append(True)
        if callback is not None:
            try:
                callback(value)
            except BaseException as exc:  # the caller's own failure (a closed stdout)
                raise _CallerError() from exc

    def run() -> Answer:
        lines = _exchange(config, request)
        try:
            first = next(lines)
            if not first.get("started"):
                raise _Unavailable("the watcher did not start the answer")
            if on_started is not None:
                on_started()
            for reply in lines:
                if "token" in reply:
                    deliver(on_token, str(reply["token"]))
                elif "quotes" in reply:
                    deliver(on_quotes, [Quote.from_json(q) for q in reply["quotes"]])
                elif "answer" in reply:
                    _report_pending(reply, on_pending)
                    return Answer.from_json(reply["answer"])
            raise _Unavailable("the watcher ended the answer early")
        except _CallerError:
            raise
        except Exception as exc:  # after output, never a second answer in process
            if streamed:
                raise DaemonError(f"the watcher stopped in the middle of the answer ({exc})",
                                  hint="Ask again (in this process: RAG_DAEMON=off).") from None
            raise
        finally:
            lines.close()

    try:
        return _attempt(config, run)
    except _CallerError as exc:
        raise exc.__cause__ from None


def daemon_status(config: Config, timeout: float = 2.0) -> dict | None:
    """The running watcher's own account (pid, since, socket, log, state...), or None.
    Asked even with ``daemon = off`` (`rag status` and `rag watch` always look)."""
    if config.daemon == "off":
        config = dataclasses.replace(config, daemon="auto")

    def run() -> dict:
        reply = _one(config, {"op": "status"}, timeout)
        reply.pop("ok", None)
        return reply

    try:
        return _attempt(config, run)
    except DaemonError:
        return None


def _report_pending(reply: dict, on_pending) -> None:
    """A watcher of an older version sends no count: then nothing is said, as before."""
    counts = reply.get("vectors_pending")
    if on_pending is not None and isinstance(counts, list) and len(counts) == 2:
        on_pending((int(counts[0]), int(counts[1])))


# -- the exchange ---------------------------------------------------------------------------


def _attempt(config: Config, run: Callable):
    if config.daemon == "off":
        return None
    try:
        return run()
    except (_Unavailable, OSError, BadRequest, KeyError, TypeError, ValueError, StopIteration) as exc:
        if config.daemon == "require":
            raise DaemonError(f"the watcher did not answer: {exc or type(exc).__name__}") from None
        return None


def _one(config: Config, request: dict, first_timeout: float = FIRST_REPLY) -> dict:
    lines = _exchange(config, request, first_timeout)
    try:
        return next(lines)
    finally:
        lines.close()


def _exchange(config: Config, request: dict, first_timeout: float = FIRST_REPLY) -> Iterator[dict]:
    """Send one request; yield the reply lines (an error line raises ``_Unavailable``)."""
    path = socket_path(config)
    if not path.exists():
        raise _Unavailable(f"no socket at {path} (is `rag watch` running?)")
    sock = connect(path, CONNECT_TIMEOUT)
    try:
        sock.sendall(encode(request))
        sock.settimeout(first_timeout)
        reader = LineReader(sock, MAX_REPLY)
        while True:
            try:
                line = reader.readline()
            except socket.timeout:
                raise _Unavailable("no answer in time") from None
            if line is None:
                raise _Unavailable("the watcher closed the connection")
            reply = decode(line)
            if not isinstance(reply, dict):
                raise _Unavailable("a reply that is not a JSON object")
            if "error" in reply:
                raise _Unavailable(f"{reply.get('code', 'error')}: {reply['error']}")
            yield reply
            sock.settimeout(STREAM_IDLE)
    finally:
        sock.close()
