"""Obsidian's Markdown dialect: wikilinks, embeds, tags, callouts, comments.

Every rewrite here keeps the number of lines, so a section's text still maps line for
line onto the original file (the chunker relies on that for line ranges). All scanners are
linear: a note of 50,000 '[' or unclosed '<!--' must not take quadratic time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

NOTE_SUFFIXES = (".md", ".markdown")

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]{1,500})\]\]")
_MD_LINK = re.compile(r"(!?)\[([^\[\]\n]{0,500})\]\(([^()\s]{0,2000})(?:\s+\"[^\"\n]{0,200}\")?\)")
_CALLOUT = re.compile(r"^([ \t]*(?:>[ \t]?)+)\[!([\w-]{1,40})\][+-]?[ \t]*(.*)$", re.M)
_INLINE_CODE = re.compile(r"`[^`\n]{0,2000}`")
# A tag starts after a space or line start (never inside a word, URL or link target),
# has at least one non-digit character, and may nest with '/'.
_TAG = re.compile(r"(?:^|(?<=[\s,;:!?\"'(\[]))#([\w/-]{0,100}[^\W\d][\w/-]{0,100})", re.M)


@dataclass(frozen=True)
class Link:
    target: str  # the note name or path as written, without '#...' and '|...'
    subpath: str  # heading or '^block' after '#', '' if none
    alias: str
    embed: bool

    @property
    def display(self) -> str:
        """How the link reads in prose: alias, else 'Note > Heading', else the note name."""
        if self.alias:
            return self.alias
        if not is_note_target(self.target):
            return self.target.rsplit("/", 1)[-1]  # an attachment: its file name
        name = os.path.splitext(self.target.rsplit("/", 1)[-1])[0]
        if self.subpath and not self.subpath.startswith("^"):
            heading = self.subpath.split("#")[-1]
            return f"{name} > {heading}" if name else heading
        return name


def parse_link(inner: str, embed: bool) -> Link:
    target, _, alias = inner.partition("|")
    target, _, subpath = target.partition("#")
    target, alias = target.strip(), alias.strip()
    if embed and not is_note_target(target) and re.fullmatch(r"\d+(x\d+)?", alias):
        alias = ""  # ![[image.png|100x145]] gives a size, not a name
    return Link(target=target, subpath=subpath.strip(), alias=alias, embed=embed)


def is_note_target(target: str) -> bool:
    ext = os.path.splitext(target)[1].lower()
    return ext in NOTE_SUFFIXES or ext == "" or not re.fullmatch(r"\.[a-z0-9]{1,5}", ext)


# ---------------------------------------------------------------- blanking


def blank_delimited(text: str, start: str, end: str) -> str:
    """Replace each start...end span by spaces, keeping newlines; linear time."""
    out, pos = [], 0
    while True:
        i = text.find(start, pos)
        if i < 0:
            break
        j = text.find(end, i + len(start))
        if j < 0:
            break  # unclosed: no later span can close either
        j += len(end)
        out.append(text[pos:i])
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        pos = j
    out.append(text[pos:])
    return "".join(out)


def strip_comments(text: str) -> str:
    """Drop Obsidian %% comments %% and HTML <!-- comments -->, keeping the line count."""
    if "%%" in text:
        text = blank_delimited(text, "%%", "%%")
    if "<!--" in text:
        text = blank_delimited(text, "<!--", "-->")
    return text


# ---------------------------------------------------------------- rewriting prose


def rewrite_links(text: str, links: list[Link]) -> str:
    """Wikilinks read as their text; Markdown links keep their text and drop the URL."""
    def wikilink(m: re.Match[str]) -> str:
        link = parse_link(m.group(2), embed=bool(m.group(1)))
        links.append(link)
        return link.display

    def md_link(m: re.Match[str]) -> str:
        return m.group(2)

    def rewrite(part: str) -> str:
        if "[[" in part:
            part = _WIKILINK.sub(wikilink, part)
        if "](" in part:
            part = _MD_LINK.sub(md_link, part)
        return part

    return _outside_inline_code(text, rewrite)


def _outside_inline_code(text: str, rewrite) -> str:
    """Apply rewrite to the text between `code spans`; code is shown as written."""
    if "`" not in text:
        return rewrite(text)
    out, pos = [], 0
    for m in _INLINE_CODE.finditer(text):
        out.append(rewrite(text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(rewrite(text[pos:]))
    return "".join(out)


def rewrite_callouts(text: str) -> str:
    """'> [!note] Title' keeps '> Title' (or the type's name when there is no title)."""
    if "[!" not in text:
        return text
    return _CALLOUT.sub(lambda m: m.group(1) + _title(m), text)


def callout_title(line: str) -> str | None:
    """The title ``rewrite_callouts`` keeps of a callout's first line ('> [!note] Title'), None
    when the line opens no callout."""
    found = _CALLOUT.match(line)
    return _title(found).strip() if found else None


def _title(found: re.Match[str]) -> str:
    return found.group(3) or found.group(2).capitalize()


def find_tags(text: str) -> list[str]:
    """Inline #tags in prose (the caller passes text without code blocks), lower-cased."""
    if "#" not in text:
        return []
    text = _INLINE_CODE.sub(" ", text)
    return [m.group(1).strip("/").lower() for m in _TAG.finditer(text) if m.group(1).strip("/")]


# ---------------------------------------------------------------- resolving notes


class NoteResolver:
    """Note name → path, the way Obsidian resolves ``[[links]]`` in a vault.

    Matches a vault-relative path ("Folder/Note"), else a file name case-insensitively
    ("note"); when several notes share a name, the one nearest the vault root wins, then
    alphabetical order. Built from the discovered files, so it never points outside a root.
    """

    def __init__(self, by_name: dict[str, str], by_relpath: dict[str, str]):
        self._by_name = by_name
        self._by_relpath = by_relpath

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path], roots: Iterable[str | Path] = ()) -> "NoteResolver":
        # Plain strings (abspath normalises them), kept as strings until one is resolved:
        # with 14,000 notes, Path objects (parents, relative_to, even construction) made
        # this most of a one-note re-index.
        prefixes = [os.path.join(os.path.abspath(r), "") for r in roots]  # "/vault/"
        by_name: dict[str, str] = {}
        by_relpath: dict[str, str] = {}
        notes = [os.path.abspath(p) for p in paths if str(p).lower().endswith(NOTE_SUFFIXES)]
        for text in sorted(notes, key=lambda p: (p.count(os.sep), p)):
            path = text
            name = os.path.basename(text).lower()
            by_name.setdefault(os.path.splitext(name)[0], path)
            by_name.setdefault(name, path)
            for prefix in prefixes:
                if text.startswith(prefix) and len(text) > len(prefix):
                    rel = text[len(prefix):].replace(os.sep, "/").lower()
                    by_relpath.setdefault(rel, path)
                    by_relpath.setdefault(os.path.splitext(rel)[0], path)
        return cls(by_name, by_relpath)

    def resolve(self, target: str) -> Path | None:
        target = target.strip().strip("/").lower()
        if not target:
            return None
        hit = self._by_relpath.get(target)
        if hit is None:
            name = target.rsplit("/", 1)[-1]
            hit = self._by_name.get(name) or self._by_name.get(os.path.splitext(name)[0] if
                                                               name.endswith(NOTE_SUFFIXES) else name)
        return Path(hit) if hit is not None else None

    def to_dict(self) -> dict[str, dict[str, str]]:
        """A plain form, to hand the resolver to the parsing worker process."""
        return {"name": dict(self._by_name), "rel": dict(self._by_relpath)}

    @classmethod
    def from_dict(cls, data: dict[str, dict[str, str]]) -> "NoteResolver":
        return cls({k: str(v) for k, v in data.get("name", {}).items()},
                   {k: str(v) for k, v in data.get("rel", {}).items()})
