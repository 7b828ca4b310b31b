"""The one error parsing raises: its message is the reason shown to the user."""

from __future__ import annotations


class ParseError(Exception):
    """A file could not be parsed; str(error) is a short reason such as "encrypted: needs a password"."""


def failure_reason(exc: Exception) -> str:
    """Why a file is skipped when parsing it raised ``exc``: the same words whichever process parsed it."""
    if isinstance(exc, ParseError):
        return str(exc)
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    if isinstance(exc, RecursionError):
        return "too deeply nested to parse"
    return f"parser failed: {type(exc).__name__}: {str(exc)[:120]}"
