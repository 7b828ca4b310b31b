"""Typed errors. Each carries the exit code the CLI returns and a hint for the user.

Library code raises these; ``ragcli.cli`` turns them into one line on stderr and an exit
code in a single place.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    UNEXPECTED = 1
    USAGE = 2
    CONFIG = 3
    NO_INDEX = 4
    MODEL = 5
    STORE = 6
    LOCKED = 7
    VERIFY_FAILED = 8
    DOWNLOAD = 9
    INDEX_MISMATCH = 10
    NO_DAEMON = 11
    INTERRUPTED = 130


class RagError(Exception):
    """Base class: a failure we can explain to the user."""

    exit_code = ExitCode.UNEXPECTED
    hint = ""

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class UsageError(RagError):
    """The command line or its arguments are wrong."""

    exit_code = ExitCode.USAGE


class ConfigError(RagError):
    """config.toml or a RAG_* variable holds a value we cannot use."""

    exit_code = ExitCode.CONFIG
    hint = "Check config.toml and RAG_* environment variables (`rag doctor` shows where they are)."


class NoIndexError(RagError):
    """There is no index yet."""

    exit_code = ExitCode.NO_INDEX
    hint = "Build one first: rag index PATH"


class ModelError(RagError):
    """A model file is missing, unreadable or not a usable GGUF."""

    exit_code = ExitCode.MODEL
    hint = "Check the file, or run `rag models` to see which model each role uses."


class ModelServerDown(ModelError):
    """A model server did not answer (refused, timed out, kept failing); it may come back,
    so the watcher waits and tries again instead of stopping."""

    hint = "Start the server or fix its URL; unset embed_url (RAG_EMBED_URL) to embed in-process."


class StoreError(RagError):
    """The index store cannot be opened or written."""

    exit_code = ExitCode.STORE
    hint = "Run `rag verify --repair`; if that fails, `rag index --rebuild`."


class IndexMismatchError(StoreError):
    """The index was built with another embedding model or chunker."""

    exit_code = ExitCode.INDEX_MISMATCH
    hint = "Rebuild it with: rag index --rebuild"


class LockedError(RagError):
    """Another process holds the index's write lock."""

    exit_code = ExitCode.LOCKED


class VerifyFailed(RagError):
    """`rag verify` found problems."""

    exit_code = ExitCode.VERIFY_FAILED
    hint = "Fix them with: rag verify --repair"


class Cancelled(RagError):
    """A stop was asked for (Ctrl-C, SIGTERM) and the work ended at a safe point."""

    exit_code = ExitCode.INTERRUPTED


class DaemonError(RagError):
    """The watcher's socket did not answer where it had to (RAG_DAEMON=require, or it
    stopped in the middle of a streamed answer)."""

    exit_code = ExitCode.NO_DAEMON
    hint = "Start it with: rag watch --detach (or unset RAG_DAEMON to answer in this process)."


class DownloadError(RagError):
    """A model download failed or did not match its checksum."""

    exit_code = ExitCode.DOWNLOAD
    hint = "Check the name or URL and your connection; a partial file resumes on retry."
