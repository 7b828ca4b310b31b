"""The watcher: one long writing session that keeps the index in step with the disk.

Threads: watchdog's observer thread turns events into pending paths (``changes``); the
main thread sleeps on a condition until a path's quiet period ends, then runs the same
incremental pipeline as ``rag index`` on just those paths (``Indexer.run(scope=...)``).
A full reconcile runs at start (catching what changed while the watcher was down) and
every ``reconcile_interval`` (catching what the OS dropped). Idle, nothing runs but the
observer's blocking read and the socket's blocking accept (``ragcli.serve.server``: it
answers status once the lock is held, search and ask once the embedder is loaded, from
its own threads, with a reader of this index that shares the writer's vector store).

Stopping: SIGTERM/SIGINT only set a flag (the indexer's ``cancel`` event). Between syncs
the loop just ends; during one, the pipeline checks the flag between files and batches and
stops there (nothing of the unflushed batch is written). A native call cannot be
interrupted, and one llama.cpp batch or one PDF parse can take seconds on a busy machine,
so a last resort thread ends the process with ``os._exit(0)`` ``grace`` + 1 seconds after
the signal, unless the store says a write is in progress (``Index.in_write``; then it waits
for that write): the batch in hand was not written yet, SQLite drops an uncommitted
transaction, and the kernel releases the lock.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..config import Config, write_private
from ..errors import Cancelled, IndexMismatchError, ModelError, ModelServerDown, RagError
from .changes import PendingChanges, Relevance, event_paths
from .files import STATE_NAME, remove_pid, write_exit, write_pid
from .observe import make_handler, start_observer, stop_observer, unwatched_folders, warn_limit
from .prefill import PAUSE as PREFILL_PAUSE
from .prefill import start_prefill

log = logging.getLogger("ragcli.watch")

MAX_ATTEMPTS = 3  # a path whose sync raised is retried this often before the next reconcile
STATE_EVERY = 0.5  # seconds between two writes of the state file at most


@dataclass(frozen=True)
class WatchOptions:
    debounce: float = 1.0
    reconcile_interval: float = 300.0
    polling: bool = False
    grace: float = 2.0  # seconds a stop waits for the file in hand before interrupting
    serve: bool = True  # answer search/ask/status on the socket (``ragcli.serve``)
    log_file: str | None = None  # where the log goes, for `rag status` (None: stderr)


class Watcher:
    """``Watcher(config, paths, options).run()`` blocks until SIGTERM/SIGINT or ``stop()``."""

    def __init__(self, config: Config, paths: Sequence[Path] | None = None,
                 options: WatchOptions | None = None):
        self.config = config
        self.paths = [Path(p) for p in paths] if paths else None
        self.options = options or WatchOptions(config.debounce, config.reconcile_interval)
        self.pending = PendingChanges(self.options.debounce)
        self.indexer = None
        self.server = None
        self.roots: list[Path] = []
        self.observer = None
        self.observer_kind = ""
        self.prefill = None  # embeds evidence passages when idle (``prefill``)
        self.since = time.time()
        self.state = "starting"
        self.last_sync: float | None = None
        self.syncs = 0
        self._stop = threading.Event()
        self._busy = False
        self._reaper: threading.Thread | None = None
        self._attempts: dict[str, int] = {}
        self._failed: dict[str, str] = {}
        self._state_written: tuple | None = None
        self._state_at = 0.0

    # -- life cycle -------------------------------------------------------------------------
    def run(self) -> None:
        from ..pipeline.indexing import Indexer, resolve_roots

        self.indexer = Indexer(self.config, role="watch", progress=self._progress, cancel=self._stop)
        restore = self._install_signals()
        code = 0
        try:
            write_pid(self.config)
            self.roots = resolve_roots(self.indexer.idx, self.paths)
            self._start_serving()
            self.relevance = Relevance(self.roots, [self.config.data_dir, self.config.index_dir])
            self.observer, self.observer_kind = start_observer(
                self.roots, make_handler(self._on_event), polling=self.options.polling)
            log.info("watching %s (%s observer, debounce %gs, full reconcile every %gs)",
                     ", ".join(map(str, self.roots)), self.observer_kind, self.options.debounce,
                     self.options.reconcile_interval)
            self._check_coverage()
            self._reconcile(startup=True)
            if not self._stop.is_set():
                self._warm_up()
                self._start_answering()
                self.prefill = start_prefill(self.config, self.indexer)
                self._loop()
        except Cancelled:
            pass
        except BaseException as exc:
            code = 130 if isinstance(exc, KeyboardInterrupt) else int(getattr(exc, "exit_code", 1))
            raise
        finally:
            if self.observer is not None:
                stop_observer(self.observer)
            if self.server is not None and not self.server.close():
                self._exit_now()  # a request still holds the models: freeing them would crash
            self._remove_state()
            if self.prefill is not None:
                self.prefill.close()
            self.indexer.close()
            restore()
            write_exit(self.config, code)
            log.info("stopped; the index lock is released")

    def _start_serving(self) -> None:
        if self.options.serve:
            from ..serve.server import start_server

            self.server = start_server(self.config, self.state_dict)

    def _start_answering(self) -> None:
        """Let the socket answer search and ask with the embedder the indexer loaded."""
        if self.server is None:
            return
        try:
            embedder = self.indexer.embedder()
        except Exception:  # noqa: BLE001 - _warm_up said why; clients work in their own process
            log.warning("search and ask are not answered here: the embedder did not load")
            return
        self.server.warm(self.indexer.idx, embedder)

    def _exit_now(self) -> None:
        """End the process at once, the index safe (no write is in hand) and the files tidy."""
        self._remove_state()
        if self.server is not None:
            self.server.remove_file()
        write_exit(self.config, 0)
        for handler in logging.getLogger("ragcli").handlers:
            handler.flush()
        os._exit(0)

    def stop(self) -> None:
        """Ask the loop to end (safe from a signal handler or another thread)."""
        self._stop.set()
        self.pending.wake()

    def _loop(self) -> None:
        next_reconcile = time.monotonic() + self.options.reconcile_interval
        while not self._stop.is_set():
            self._write_state()
            until = next_reconcile
            if self.prefill is not None and self.prefill.wanted(len(self.pending)):
                self._busy = True  # a stop inside the native call is reaped like a sync's
                self.prefill.step(self.server.engine if self.server else None)
                self._busy = False
                until = min(until, time.monotonic() + PREFILL_PAUSE)
            self.pending.wait(until=until)
            if self._stop.is_set():
                break
            if self.pending.take_reconcile() or time.monotonic() >= next_reconcile:
                self._check_coverage()
                self._reconcile()
                next_reconcile = time.monotonic() + self.options.reconcile_interval
            due = self.pending.take_due()
            if due:
                self._sync(due)

    # -- work -------------------------------------------------------------------------------
    def _reconcile(self, startup: bool = False) -> None:
        self.state = "reconciling"
        self._write_state(force=True)
        report = self._run(None, what="start-up reconcile" if startup else "reconcile")
        if report is not None:
            self._attempts.clear()
        self.state = "watching"

    def _sync(self, paths: list[str]) -> None:
        scope = self._worth_syncing(paths)
        if not scope:
            return
        self.state = "syncing"
        self._write_state()
        report = self._run(scope, what="sync")
        if report is None:
            self._retry(scope)
        else:
            for path in scope:
                self._attempts.pop(path, None)
        self.state = "watching"

    def _run(self, scope: list[str] | None, what: str):
        """One pipeline run; returns its report, or None when it failed (and was logged)."""
        self._busy = True
        try:
            report = self.indexer.run(self.roots, scope=[Path(p) for p in scope] if scope else None)
        except ModelServerDown as exc:  # an embeddings server that may come back: try again later
            log.warning("%s failed: %s", what, exc)
            return None
        except (Cancelled, IndexMismatchError, ModelError):
            raise  # a stop, or an index no run can fix: the daemon ends and says why
        except RagError as exc:
            log.warning("%s failed: %s%s", what, exc, f" ({exc.hint})" if exc.hint else "")
            return None
        except Exception:  # one bad run must not end the daemon
            log.exception("%s failed unexpectedly; will try again", what)
            return None
        finally:
            self._busy = False
        self.last_sync = time.time()
        self.syncs += 1
        if self.prefill is not None:
            self.prefill.after_run(report)
        self._log_report(report, what, scope)
        return report

    def _worth_syncing(self, paths: list[str]) -> list[str]:
        """Drop paths that are neither indexable now nor in the index (costs no pipeline run)."""
        from ..ingest.discover import classify

        exclude = [self.config.data_dir, self.config.index_dir]
        keep, unknown = [], []
        for path in paths:
            if os.path.isdir(path) or classify(Path(path), self.roots, exclude) is not None:
                keep.append(path)
            else:
                unknown.append(path)
        if unknown:
            known = self.indexer.idx.files()
            for path in unknown:
                prefix = path.rstrip(os.sep) + os.sep
                if path in known or any(k.startswith(prefix) for k in known):
                    keep.append(path)
        return sorted(keep)

    def _retry(self, paths: list[str]) -> None:
        for path in paths:
            n = self._attempts.get(path, 0) + 1
            self._attempts[path] = n
            if n <= MAX_ATTEMPTS:
                self.pending.add(path, delay=5.0 * n)
            else:
                log.warning("giving up on %s until the next reconcile", path)

    def _warm_up(self) -> None:
        """Load the embedder and parser now, so the first save is not slowed by it."""
        try:
            self.indexer.warm_up()
        except ModelServerDown as exc:
            log.warning("the embeddings server is not answering yet: %s", exc)
        except (IndexMismatchError, ModelError):
            raise
        except Exception:  # a later sync reports it again, with context
            log.warning("could not load the embedder yet", exc_info=True)

    def _check_coverage(self) -> None:
        """Fall back to polling when inotify silently left folders unwatched."""
        if self.observer_kind != "native":
            return
        missing = unwatched_folders(self.roots)
        if missing:
            time.sleep(0.5)  # a folder created a moment ago may be about to get its watch
            missing = unwatched_folders(self.roots)
        if not missing:
            return
        warn_limit(missing=missing)
        stop_observer(self.observer)
        self.observer, self.observer_kind = start_observer(
            self.roots, make_handler(self._on_event), polling=True)
        self.pending.request_reconcile()  # what the unwatched folders did meanwhile

    # -- events, progress and signals -------------------------------------------------------
    def _on_event(self, event) -> None:  # observer thread
        paths, reconcile = event_paths(event, self.relevance)
        for path in paths:
            log.debug("%s %s", event.event_type, path)
            self.pending.add(path)
        if reconcile:
            log.info(".ragignore changed: reconciling")
            self.pending.request_reconcile()

    def _progress(self, event) -> None:
        if event.message:
            log.info("%s", event.message)
        elif event.item:
            log.debug("indexed %s", event.item)

    def _install_signals(self):
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        wanted = {signal.SIGTERM: self._on_stop_signal, signal.SIGINT: self._on_stop_signal}
        if hasattr(signal, "SIGHUP"):
            wanted[signal.SIGHUP] = self._on_hup
        old = {sig: signal.signal(sig, handler) for sig, handler in wanted.items()}

        def restore() -> None:
            for sig, handler in old.items():
                signal.signal(sig, handler)

        return restore

    def _on_stop_signal(self, signum, _frame) -> None:
        """Only sets the flag (and starts the last-resort timer): no exception is thrown into
        whatever the main thread is doing."""
        log.info("%s received: stopping", signal.Signals(signum).name)
        self.stop()
        if self._busy and self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name="rag-watch-stop", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        """Last resort for a stop stuck in a native call (see the module docstring)."""
        deadline = time.monotonic() + self.options.grace + 1.0
        warned = False
        while self._busy:
            time.sleep(0.1)
            if time.monotonic() < deadline or self.indexer.idx.in_write:
                continue
            if not warned:
                log.info("still inside a native call (embedding or parsing); ending without "
                         "writing the batch in hand")
                for handler in logging.getLogger("ragcli").handlers:
                    handler.flush()
                warned = True
            previous = sys.getswitchinterval()
            sys.setswitchinterval(60.0)  # keep the main thread off the GIL between check and exit
            try:
                if self._busy and not self.indexer.idx.in_write:
                    self._exit_now()
            finally:
                sys.setswitchinterval(previous)

    def _on_hup(self, _signum, _frame) -> None:
        log.info("SIGHUP received: full reconcile")
        self.pending.request_reconcile()

    # -- reporting --------------------------------------------------------------------------
    def _log_report(self, report, what: str, scope: list[str] | None) -> None:
        changed = report.files_indexed or report.files_removed
        level = logging.INFO if changed or what == "start-up reconcile" else logging.DEBUG
        log.log(level, "%s: %d indexed, %d removed, %d unchanged, %d skipped; %d chunks added, "
                "%d removed (%.2fs)", what, report.files_indexed, report.files_removed,
                report.files_unchanged, len(report.files_failed), report.chunks_added,
                report.chunks_removed, report.seconds)
        failed_now = {f.path: f.reason for f in report.files_failed}
        for path, reason in failed_now.items():
            if self._failed.get(path) != reason:
                log.warning("skipped %s: %s", path, reason)
        if scope is None:
            self._failed = failed_now
        else:
            for path in scope:
                self._failed.pop(path, None)
            self._failed.update(failed_now)

    def state_dict(self) -> dict:
        return {"pid": os.getpid(), "since": self.since, "roots": [str(r) for r in self.roots],
                "pending": len(self.pending), "state": self.state, "observer": self.observer_kind,
                "last_sync": self.last_sync, "syncs": self.syncs, "debounce": self.options.debounce,
                "reconcile_interval": self.options.reconcile_interval, "log": self.options.log_file,
                "socket": str(self.server.path) if self.server is not None else None,
                "passages": self.prefill.progress() if self.prefill is not None else None}

    def _write_state(self, force: bool = False) -> None:
        data = self.state_dict()
        key = (data["pending"], data["state"], data["last_sync"], data["observer"], data["passages"])
        now = time.monotonic()
        if not force and (key == self._state_written or now - self._state_at < STATE_EVERY):
            if key != self._state_written:
                self.pending.add_wakeup(self._state_at + STATE_EVERY)
            return
        try:
            write_private(self.config.index_dir / STATE_NAME, json.dumps(data))
        except OSError as exc:
            log.debug("cannot write the state file: %s", exc)
            return
        self._state_written, self._state_at = key, now

    def _remove_state(self) -> None:
        remove_pid(self.config)
        with contextlib.suppress(OSError):
            (self.config.index_dir / STATE_NAME).unlink()


def watch(config: Config, paths: Sequence[Path] | None = None, options: WatchOptions | None = None) -> None:
    """Run the watcher in the foreground until SIGTERM or SIGINT."""
    Watcher(config, paths, options).run()
