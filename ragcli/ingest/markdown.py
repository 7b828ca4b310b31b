"""Markdown notes → Document: sections by heading, Obsidian syntax read as prose.

markdown-it-py gives the block structure (headings and code blocks, with line maps). Its
inline rules are switched off: we only need where headings and code are, and the inline
link/emphasis scanners are the known slow paths ("[" * 50000 takes 0.5 s with them, 0 s
without). Section text is the original lines, rewritten line for line, so every section
maps exactly onto lines of the file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from ..types import Document, Section
from . import obsidian
from .frontmatter import as_list, split_front_matter
from .obsidian import Link, NoteResolver

MAX_EMBED_DEPTH = 3
MAX_EMBED_CHARS = 50_000  # one embed may not swamp the note that embeds it
MAX_EMBED_BYTES = 5 * 1024 * 1024

_md = MarkdownIt("commonmark").disable(["inline", "text_join"], ignoreInvalid=True)
_BLOCK_ID = re.compile(r"[ \t]\^[A-Za-z0-9-]{1,64}[ \t]*$", re.M)  # ' ^b15695': a block's id
_HEADING_MARKS = re.compile(r"(\*\*|__|`)")


@dataclass
class _Block:
    """Where headings and code sit in the body, from markdown-it's line maps (0-based)."""

    headings: list[tuple[int, int, int, str]]  # (first line, end line, level, text)
    code_lines: set[int]


FAST_SCAN_CHARS = 1_000_000  # past this, markdown-it's block pass costs ~0.7 s/MB: scan lines
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _blocks(body: str) -> _Block:
    if len(body) > FAST_SCAN_CHARS:
        return _scan_blocks(body)
    headings, code = [], set()
    tokens = _md.parse(body)
    for i, tok in enumerate(tokens):
        if tok.map is None:
            continue
        if tok.type == "heading_open" and tok.level == 0:
            text = tokens[i + 1].content if i + 1 < len(tokens) else ""
            headings.append((tok.map[0], tok.map[1], int(tok.tag[1:]), text))
        elif tok.type in ("fence", "code_block"):
            code.update(range(tok.map[0], tok.map[1]))
    return _Block(headings, code)


def _scan_blocks(body: str) -> _Block:
    """A linear line scanner for huge notes: ATX headings and fenced code only.

    It misses setext headings and indented code, which is the price of staying fast
    (and inside the time limit) on a 50 MB note.
    """
    headings, code = [], set()
    fence = None
    for i, line in enumerate(body.split("\n")):
        if fence is not None:
            code.add(i)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        opened = _FENCE_OPEN.match(line)
        if opened:
            fence = opened.group(1)
            code.add(i)
            continue
        atx = _ATX.match(line) if line.lstrip(" ").startswith("#") else None
        if atx:
            headings.append((i, i + 1, len(atx.group(1)), atx.group(2) or ""))
    return _Block(headings, code)


def _clean_heading(text: str) -> str:
    links: list[Link] = []
    text = obsidian.rewrite_links(obsidian.strip_comments(text), links)
    return _HEADING_MARKS.sub("", text).strip() or "(untitled)"


def _rewrite_prose(lines: list[str], code: set[int], links: list[Link], tags: list[str]) -> list[str]:
    """Rewrite runs of non-code lines (comments, links, callouts); code stays verbatim."""
    out = list(lines)
    start = None
    for i in range(len(lines) + 1):
        is_prose = i < len(lines) and i not in code
        if is_prose and start is None:
            start = i
        elif not is_prose and start is not None:
            chunk = "\n".join(lines[start:i])
            chunk = obsidian.strip_comments(chunk)
            chunk = obsidian.rewrite_callouts(obsidian.rewrite_links(chunk, links))
            chunk = _BLOCK_ID.sub("", chunk)
            tags.extend(obsidian.find_tags(chunk))
            out[start:i] = chunk.split("\n")
            start = None
    return out


def _title(meta: dict[str, object], path: Path) -> str:
    title = meta.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    return path.stem


def _date(meta: dict[str, object]) -> str | None:
    for key in ("date", "created", "updated", "modified"):
        value = meta.get(key)
        if isinstance(value, str):
            match = re.match(r"\d{4}-\d{2}-\d{2}", value.strip())
            if match:
                return match.group(0)
    return None


def _sections(title: str, lines: list[str], block: _Block, body_start: int) -> list[Section]:
    """Cut the body at top-level headings; heading lines are blanked from the text."""
    sections = []
    stack: list[tuple[int, str]] = []
    bounds = [(0, None)] + [(h[0], h) for h in block.headings]
    for n, (start, heading) in enumerate(bounds):
        end = bounds[n + 1][0] if n + 1 < len(bounds) else len(lines)
        if heading is not None:
            first, after, level, text = heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, _clean_heading(text)))
            body = [""] * (after - first) + lines[after:end]
        else:
            body = lines[start:end]
        if end <= start:
            continue
        heads = [h for _, h in stack]
        if heads and heads[0].casefold() == title.casefold():
            heads = heads[1:]  # an H1 that repeats the title would read "Note > Note > Section"
        path = (title, *heads)
        sections.append(Section(path, "\n".join(body), body_start + start + 1, body_start + end))
    return sections


def parse_markdown(text: str, path: Path, resolver: NoteResolver | None = None,
                   warnings: list[str] | None = None, _stack: tuple[str, ...] = ()) -> Document:
    """Parse one note's text. Never raises on odd content; embeds are resolved through resolver."""
    path = Path(os.path.abspath(path))
    meta, fm_lines = split_front_matter(text)
    all_lines = text.split("\n")
    lines = all_lines[fm_lines:]
    body = "\n".join(lines)
    block = _blocks(body)
    links: list[Link] = []
    tags = [t.lstrip("#").lower() for t in as_list(meta.get("tags") or meta.get("tag"))]
    lines = _rewrite_prose(lines, block.code_lines, links, tags)
    title = _title(meta, path)
    sections = _sections(title, lines, block, fm_lines)
    embeds: list[str] = []
    if resolver is not None and len(_stack) < MAX_EMBED_DEPTH:
        sections = _expand_embeds(sections, all_lines, fm_lines, block, resolver,
                                  _stack + (str(path),), embeds)
    return Document(
        path=str(path), title=title, sections=sections,
        tags=tuple(dict.fromkeys(t for t in tags if t)),
        aliases=tuple(as_list(meta.get("aliases") or meta.get("alias"))),
        date=_date(meta),
        links=tuple(dict.fromkeys(link.target for link in links if link.target)),
        embeds=tuple(dict.fromkeys(embeds)),
        warnings=list(warnings or []),
    )


def parse_plain_text(text: str, path: Path, warnings: list[str] | None = None) -> Document:
    """A .txt file: one section under the file's name, split later by paragraphs."""
    path = Path(os.path.abspath(path))
    n = text.count("\n") + 1
    return Document(path=str(path), title=path.stem, sections=[Section((path.stem,), text, 1, n)],
                    warnings=list(warnings or []))


# ---------------------------------------------------------------- embeds


def _expand_embeds(sections: list[Section], raw_lines: list[str], fm_lines: int, block: _Block,
                   resolver: NoteResolver, stack: tuple[str, ...], embeds: list[str]) -> list[Section]:
    """After each section, add one Section per note it embeds, holding that note's text."""
    out = []
    for section in sections:
        out.append(section)
        for line_no in range(section.line_start, section.line_end + 1):
            raw = raw_lines[line_no - 1]
            if "![[" not in raw or (line_no - 1 - fm_lines) in block.code_lines:
                continue
            for m in obsidian._WIKILINK.finditer(raw):
                if not m.group(1):
                    continue
                link = obsidian.parse_link(m.group(2), embed=True)
                target = resolver.resolve(link.target) if obsidian.is_note_target(link.target) else None
                if target is None:
                    continue
                embeds.append(str(target))
                if str(target) in stack:
                    continue  # a cycle: A embeds B embeds A
                text = _embedded_text(target, link, resolver, stack)
                if text.strip():
                    out.append(Section(section.heading_path + (link.display,), text, line_no, line_no))
    return out


def _embedded_text(target: Path, link: Link, resolver: NoteResolver, stack: tuple[str, ...]) -> str:
    from .text import decode  # local: text imports errors only, but keep the cycle obvious
    from .errors import ParseError

    try:
        if target.stat().st_size > MAX_EMBED_BYTES:
            return ""
        text, _ = decode(target.read_bytes())
    except (OSError, ParseError):
        return ""
    doc = parse_markdown(text, target, resolver, _stack=stack)
    chosen = _pick_sections(doc, link.subpath, text.split("\n"))
    parts = []
    for sec in chosen:
        heading = " > ".join(sec.heading_path[1:])
        body = sec.text.strip()
        if body:
            parts.append(f"{heading}\n{body}" if heading and len(chosen) > 1 else body)
    return "\n\n".join(parts)[:MAX_EMBED_CHARS]


def _pick_sections(doc: Document, subpath: str, raw_lines: list[str]) -> list[Section]:
    if not subpath:
        return list(doc.sections)
    if subpath.startswith("^"):
        return _block_ref(doc, raw_lines, subpath)
    wanted = [h.strip().lower() for h in subpath.split("#") if h.strip()]
    for i, sec in enumerate(doc.sections):
        names = [h.lower() for h in sec.heading_path[1:]]
        if names and names[-1] == wanted[-1]:
            depth = len(sec.heading_path)
            picked = [sec]
            for nxt in doc.sections[i + 1:]:  # and its subsections
                if len(nxt.heading_path) <= depth or nxt.heading_path[:depth] != sec.heading_path:
                    break
                picked.append(nxt)
            return picked
    return []


def _block_ref(doc: Document, raw_lines: list[str], marker: str) -> list[Section]:
    """'^id' names the paragraph (or list item) whose last line ends with ' ^id'.

    The ids are stripped from section text, so the raw lines find the line, and the
    section that holds it gives the rewritten paragraph.
    """
    line_no = next((n for n, line in enumerate(raw_lines, 1) if line.rstrip().endswith(" " + marker)), 0)
    for sec in doc.sections:
        if sec.line_start <= line_no <= sec.line_end and sec.line_start != sec.line_end:
            lines = sec.text.split("\n")
            end = line_no - sec.line_start
            start = end
            while start > 0 and lines[start - 1].strip():
                start -= 1
            return [Section(sec.heading_path, "\n".join(lines[start:end + 1]),
                            sec.line_start + start, line_no)]
    return []
