"""Bytes to text: the encodings notes come in, and the binary files that only look like notes."""

from __future__ import annotations

import codecs
import contextlib

from .errors import ParseError

_SAMPLE = 65536
# Control characters other than tab, newline, carriage return and form feed.
_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13)) + b"\x7f"


def decode(data: bytes) -> tuple[str, list[str]]:
    """Decode a note's bytes; return (text, warnings). Raise ParseError for binary data.

    UTF-8 (BOM or not) is silent. A UTF-16/32 BOM and Latin-1 are accepted with a warning,
    so the user learns why an accented word may look odd.
    """
    for bom, codec, name in ((codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
                             (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
                             (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
                             (codecs.BOM_UTF16_BE, "utf-16", "UTF-16")):
        if data.startswith(bom):
            try:
                return _check_text(data.decode(codec)), [f"read as {name} (byte order mark)"]
            except UnicodeDecodeError:
                raise ParseError(f"binary data: invalid {name} despite its byte order mark") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    _refuse_binary(data)
    with contextlib.suppress(UnicodeDecodeError):
        return _check_text(data.decode("utf-8")), []
    # Latin-1 decodes any byte string, so the binary check above is what keeps garbage out.
    return data.decode("latin-1"), ["not UTF-8: read as Latin-1"]


def _refuse_binary(data: bytes) -> None:
    sample = data[:_SAMPLE]
    if b"\x00" in sample:
        raise ParseError("binary data (NUL bytes), not a text note")
    if sample and len(sample.translate(None, _CONTROL)) < len(sample) * 0.95:
        raise ParseError("binary data (control characters), not a text note")
    if len(sample) >= 64 and _undecodable_ratio(sample) > 0.3:
        raise ParseError("binary data (not valid text in any expected encoding), not a text note")


def _undecodable_ratio(sample: bytes) -> float:
    # Random bytes are mostly >= 0x80 and invalid UTF-8; real Latin-1 prose is mostly ASCII.
    high = sum(1 for b in sample if b >= 0x80)
    if high / len(sample) < 0.3:
        return 0.0
    try:
        sample.decode("utf-8")
        return 0.0
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 4:  # a character cut by the sample's end
            return 0.0
        return high / len(sample)


def _check_text(text: str) -> str:
    if "\x00" in text[:_SAMPLE]:
        raise ParseError("binary data (NUL characters), not a text note")
    return text
