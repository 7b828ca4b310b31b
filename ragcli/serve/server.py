"""The watcher's socket: warm search, ask and status, served from threads of the watcher.

Threads: one accepts connections; each connection gets its own short-lived thread that
reads request lines (at most ``MAX_REQUEST`` bytes, within ``READ_TIMEOUT``), checks them
(``protocol.parse_request``) and answers. Requests that use the models or the index take
the engine's lock one at a time (the engine: the watcher's ``Notes``)
(a request that cannot have it within ``BUSY_WAIT``
is told "busy" and the client answers in its own process); status and refused requests
never wait for it. Nothing a client sends is executed: three operations, checked fields.

The socket lives in the index folder (0700) with mode 0600, and on Linux a peer of
another user is refused by its credentials as well. Only the write lock's holder binds
it, so a socket file found at start-up was left by a watcher that died and is replaced.

Queries, questions and answers are never logged (not even at DEBUG): only operations,
sizes and times.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable

from ..config import Config
from ..errors import Cancelled, RagError
from ..library import Notes
from .protocol import Address, BadRequest, LineReader, connect, encode, parse_request, settings_key, socket_path

log = logging.getLogger("ragcli.serve")

READ_TIMEOUT = 10.0  # seconds a connection may take to send a request line
SEND_TIMEOUT = 30.0  # seconds a client may take to read a reply line
BUSY_WAIT = 2.0  # seconds a request waits for the models before "busy"
MAX_CLIENTS = 16
CLOSE_WAIT = 10.0  # seconds a stop waits for a request still using the models


def make_engine(config: Config, writer_index, embedder) -> Notes:
    """What the watcher keeps warm: a ``Notes`` that never asks a watcher (it is the watcher),
    over a reader of the index it writes (sharing the writer's vector store) with the embedder
    the indexer loaded, and, from the first question on, the generator."""
    from ..retrieve import Searcher
    from ..store import Index

    searcher = Searcher(config, index=Index.open_reader(config, beside=writer_index), embedder=embedder)
    engine = Notes(config, watcher=False, searcher=searcher)
    try:
        engine.search("warm up", k=1)  # opens the vector store now, not on a user's query
    except Exception:  # the first real query tries again, and says why
        log.debug("warm-up search failed", exc_info=True)
    return engine


class _ClientGone(Exception):
    """The client closed its end in the middle of a streamed answer."""


class SocketServer:
    """``start()`` binds and serves status; ``warm(...)`` adds search and ask; ``close()``."""

    def __init__(self, config: Config, status: Callable[[], dict]):
        self.config = config
        self.path = socket_path(config)
        self.engine: Notes | None = None
        self.requests = 0
        self.closing = threading.Event()
        self._status = status
        self._settings = settings_key(config)
        self._sock: socket.socket | None = None
        self._inode: int | None = None
        self._thread: threading.Thread | None = None
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> "SocketServer":
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # we hold the write lock: a socket file here is a dead watcher's
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with Address(self.path) as address:
                sock.bind(address)
            os.chmod(self.path, 0o600)
            self._inode = os.stat(self.path).st_ino
            sock.listen(64)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._thread = threading.Thread(target=self._accept_loop, name="rag-serve", daemon=True)
        self._thread.start()
        return self

    def warm(self, writer_index, embedder) -> None:
        """Start answering search and ask (the indexer's embedder is loaded)."""
        try:
            self.engine = make_engine(self.config, writer_index, embedder)
        except Exception:  # the watcher goes on; clients work in process
            log.warning("cannot answer searches on %s; they work in their own process", self.path,
                        exc_info=True)
            return
        log.info("answering search and ask on %s", self.path)

    def close(self) -> bool:
        """Stop serving. False when a request still held the models after ``CLOSE_WAIT``:
        freeing them under it would crash, so the caller should end the process instead."""
        self.closing.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                connect(self.path, 0.5).close()  # wakes the blocking accept()
            if self._thread is not None:
                self._thread.join(2.0)
            self._sock.close()
        self.remove_file()
        engine, self.engine = self.engine, None
        if engine is None:
            return True
        if not engine.lock.acquire(timeout=CLOSE_WAIT):
            log.warning("a request was still using the models after %gs", CLOSE_WAIT)
            return False
        try:
            engine.close()
        finally:
            engine.lock.release()
        return True

    def remove_file(self) -> None:
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self._inode:
                self.path.unlink()

    def status(self) -> dict:
        engine = self.engine
        data = dict(self._status())
        data.update(socket=str(self.path), serving="ready" if engine else "starting",
                    requests=self.requests, generator_loaded=bool(engine and engine.generator_loaded))
        return data

    # -- connections ------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        while not self.closing.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                if self.closing.is_set():
                    return
                time.sleep(0.1)  # EMFILE and the like: try again shortly
                continue
            if self.closing.is_set() or not _same_user(conn):
                conn.close()
                continue
            if not self._slots.acquire(blocking=False):
                self._send(conn, {"error": "too many connections", "code": "busy"})
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="rag-serve-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(READ_TIMEOUT)
            reader = LineReader(conn)
            while not self.closing.is_set():
                try:
                    line = reader.readline()
                except BadRequest as exc:  # a line past the limit: say so and hang up
                    if self._send(conn, {"error": str(exc), "code": "bad_request"}):
                        _drain(conn)
                    return
                except OSError:  # timed out or reset
                    return
                if line is None:
                    return
                if not line.strip():
                    continue
                try:
                    req = parse_request(line)
                except BadRequest as exc:
                    if not self._send(conn, {"error": str(exc), "code": "bad_request"}):
                        return
                    continue
                if not self._dispatch(conn, req):
                    return
        except Exception:  # one connection must never take the watcher down
            log.exception("a connection failed")
        finally:
            conn.close()
            self._slots.release()

    def _send(self, conn: socket.socket, obj: dict) -> bool:
        try:
            conn.settimeout(SEND_TIMEOUT)
            conn.sendall(encode(obj))
            conn.settimeout(READ_TIMEOUT)
            return True
        except OSError:
            return False

    # -- requests ---------------------------------------------------------------------------
    def _dispatch(self, conn: socket.socket, req: dict) -> bool:
        op = req["op"]
        if op == "status":
            return self._send(conn, {"ok": True, **self.status()})
        if req["settings"] != self._settings:
            return self._send(conn, {"error": "the watcher runs with other settings (models, index "
                                     "or config changed since it started)", "code": "settings"})
        engine = self.engine
        if self.closing.is_set():
            return self._send(conn, {"error": "the watcher is stopping", "code": "stopping"})
        if engine is None:
            return self._send(conn, {"error": "the watcher is still starting", "code": "starting"})
        if not engine.lock.acquire(timeout=BUSY_WAIT):
            return self._send(conn, {"error": "busy with another request", "code": "busy"})
        started = time.perf_counter()
        try:
            self.requests += 1
            if op == "search":
                hits = engine.search(req["query"], req["k"], req["mode"], **req["filters"])
                return self._send(conn, {"ok": True, "results": [h.to_json() for h in hits],
                                         **_pending(engine)})
            return self._ask(conn, engine, req)
        except RagError as exc:
            return self._send(conn, {"error": str(exc), "code": "failed", "exit_code": int(exc.exit_code),
                                     "hint": exc.hint})
        except Exception:  # logged; the client answers in its own process
            log.exception("%s request failed", op)
            return self._send(conn, {"error": "the watcher failed on this request (see its log)",
                                     "code": "failed"})
        finally:
            engine.lock.release()
            log.debug("%s answered in %.3fs", op, time.perf_counter() - started)

    def _ask(self, conn: socket.socket, engine: Notes, req: dict) -> bool:
        if not self._send(conn, {"started": True}):
            return False

        def send(event: dict) -> None:
            if self.closing.is_set():
                raise Cancelled("the watcher is stopping")
            if not self._send(conn, event):
                raise _ClientGone()

        def on_token(piece: str) -> None:
            send({"token": piece})

        def on_quotes(quotes: list) -> None:
            send({"quotes": [q.to_json() for q in quotes]})

        try:
            result = engine.ask(req["question"], k=req.get("top_k"), mode=req["mode"],
                                min_score=req.get("min_score"), temperature=req.get("temperature"),
                                max_tokens=req.get("max_tokens"), quotes_only=req["quotes_only"],
                                on_token=on_token, on_quotes=on_quotes,
                                retrieval_query=req["retrieval_query"], context=req["context"])
        except _ClientGone:
            log.debug("the client left in the middle of an answer")
            return False
        return self._send(conn, {"answer": result.to_json(), **_pending(engine)})


def _pending(engine: Notes) -> dict:
    """(chunks with no vector yet, all chunks) as the search or answer found them: the client
    prints the same notice a search in its own process would (phase two of `rag index`)."""
    return {"vectors_pending": list(engine.vectors_pending)} if engine.vectors_pending else {}


def _drain(conn: socket.socket, limit: int = 64 << 20, seconds: float = 2.0) -> None:
    """Read and drop what the client is still sending, a little while: closing with unread
    data resets the connection, and the client would lose the error line sent before."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(0.5)
        deadline = time.monotonic() + seconds
        while limit > 0 and time.monotonic() < deadline:
            data = conn.recv(1 << 16)
            if not data:
                return
            limit -= len(data)


def _same_user(conn: socket.socket) -> bool:
    """Linux: the peer runs as this user (the socket's 0600 mode already says so elsewhere)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    try:
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", raw)
    return uid == os.getuid()


def start_server(config: Config, status: Callable[[], dict]) -> SocketServer | None:
    """A started server, or None (logged) when the socket cannot be made: the watcher goes on."""
    try:
        return SocketServer(config, status).start()
    except OSError as exc:
        log.warning("cannot serve on %s (%s); search and ask will work in their own process",
                    socket_path(config), exc)
        return None
