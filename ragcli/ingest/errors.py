"""The one error parsing raises: its message is the reason shown to the user."""

from __future__ import annotations


class ParseError(Exception):
    """A file could not be parsed; str(error) is a short reason such as "encrypted: needs a password"."""
