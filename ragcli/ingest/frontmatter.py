"""YAML front matter, the common subset notes use, without a YAML dependency.

Reads ``key: scalar``, ``key: [a, b]``, ``key:`` followed by ``- item`` lines, quoted
strings and comments. Anything else (nested maps, anchors, block scalars) is skipped, never
raised on: front matter is metadata, and a note with odd metadata is still a note.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"^([A-Za-z0-9_][\w .-]*?)\s*:(?:\s+(.*)|\s*)$")
_ITEM = re.compile(r"^\s*-\s*(.*)$")
_MAX_LINES = 2000


def split_front_matter(text: str) -> tuple[dict[str, object], int]:
    """Return (metadata, number of lines the front matter block takes, 0 if none)."""
    if not text.startswith("---"):
        return {}, 0
    lines = text.split("\n", _MAX_LINES + 1)
    if lines[0].rstrip() != "---":
        return {}, 0
    for i in range(1, min(len(lines), _MAX_LINES)):
        if lines[i].rstrip() in ("---", "..."):
            return parse_block(lines[1:i]), i + 1
    return {}, 0  # unterminated: a thematic break, not front matter


def parse_block(lines: list[str]) -> dict[str, object]:
    data: dict[str, object] = {}
    key = None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _ITEM.match(line)
        if item and key is not None and (line[0] in " -"):
            current = data.get(key)
            if not isinstance(current, list):
                current = [] if current in (None, "") else [current]
            value = _scalar(item.group(1))
            if value not in (None, ""):
                current.append(value)
            data[key] = current
            continue
        if line[0] in " \t":
            continue  # nested mapping or continuation: not part of the subset
        match = _KEY.match(line)
        if not match:
            key = None
            continue
        key = match.group(1).strip().lower()
        data[key] = _value(match.group(2) or "")
    return data


def _value(raw: str) -> object:
    raw = _strip_comment(raw.strip())
    if raw.startswith("[") and raw.endswith("]"):
        return [v for v in (_scalar(p) for p in _split_flow(raw[1:-1])) if v not in (None, "")]
    return _scalar(raw)


def _split_flow(body: str) -> list[str]:
    parts, buf, quote = [], [], None
    for ch in body:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            buf.append(ch)
        elif ch == ",":
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    parts.append("".join(buf))
    return parts


def _strip_comment(raw: str) -> str:
    if raw[:1] in "\"'":
        return raw
    cut = raw.find(" #")
    return raw[:cut].rstrip() if cut >= 0 else raw


def _scalar(raw: str) -> str | None:
    raw = _strip_comment(raw.strip())
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    if raw in ("~", "null", "Null", "NULL"):
        return None
    return raw


def as_list(value: object) -> list[str]:
    """A front matter value as a list of strings ("a, b" and [a, b] both give two)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [p.strip() for p in str(value).split(",") if p.strip()]
