"""Documents → Chunks sized for the embedding model.

Rules:
- a chunk never spans two sections (each carries one heading path);
- the budget counts what is embedded, ``Chunk.embed_text()`` (title and heading path + text);
- a section is cut at paragraphs, a paragraph at sentences, a sentence at words; a code
  fence stays whole unless it alone is over budget, then it is cut at lines;
- consecutive pieces of one section share ``overlap`` tokens (the tail of the previous piece);
- line ranges are 1-based and inclusive in the original file (pages for PDFs).

``count_tokens`` may be a C tokenizer call: each paragraph is counted once, text far over
budget is split before it is counted (a token is rarely longer than 12 characters), and
each finished chunk is verified once. So a 10 MB note costs O(size) tokenizer work.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from ..types import Chunk, Document, Section

CHUNKER_VERSION = 9  # bump when the output changes for the same input (the index records it)
# 2: a PDF's chunks carry what the report is about (organisation, report, period) in their heading
# 3: a list longer than a chunk is cut between its items
# 4: a PDF page's table rows are read by pdfplumber (ruled tables too), each a list item
# 5: a long table is cut between its rows, a wrapped paragraph between its lines
# 6: a list after a lead line ("Table rows:") is cut between its items too, not into sentences
# 7: a PDF's ligatures ("ﬁ", "ﬂ", ...) are read as their letters
# 8: a PDF's dot leaders ("Deposit Fund ........ 6000-6999") are read as one mark, "…"
# 9: paragraphs and code keep the file's line breaks between them (a rule, several blank lines)


def chunker_settings(config) -> dict:
    """What shapes the chunks: part of the index fingerprint, checkable without any model."""
    return {"version": CHUNKER_VERSION, "tokens": config.chunk_tokens, "overlap": config.chunk_overlap}


MAX_CHARS_PER_TOKEN = 12
MIN_BODY_TOKENS = 16

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")
_WORD = re.compile(r"\S+\s*")
_HAS_WORD = re.compile(r"\w")
_LIST_ITEM = re.compile(r"^(?:[-*+]|\d{1,9}[.)])\s")
_TABLE_ROW = re.compile(r"^\s*\|")
_ITEM_START = re.compile(r"\n(?=(?:[-*+]|\d{1,9}[.)])\s)")  # a line that opens a top-level list item


@dataclass
class _Unit:
    text: str
    line_start: int
    line_end: int
    kind: str  # "para", "code", "sentence", "line", "word", "chars"
    cost: int = -1  # tokens without the tokenizer's special tokens; -1: not counted yet


def chunk_id(path: str, heading: str, text: str, occurrence: int = 0) -> str:
    """Stable id from content: the same text under the same heading in the same file."""
    key = "\x00".join((path, heading, text, str(occurrence)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def chunk_document(doc: Document, count_tokens: Callable[[str], int], max_tokens: int,
                   overlap: int, adds_up: bool = False) -> list[Chunk]:
    """Cut a document into chunks of at most max_tokens (as counted on embed_text()).

    ``adds_up``: a text joined at whitespace never counts more than its parts (WordPiece
    splits at whitespace before it looks a word up). A piece whose parts' counts already fit
    is then not counted again: that second count of every chunk was a quarter of chunking
    (1.7 of 6.7 s for 2,000 MDN notes), and on 19,510 MDN chunks the sums were exact."""
    counter = _Counter(count_tokens)
    chunks: list[Chunk] = []
    seen: Counter[tuple[str, str]] = Counter()
    for section in doc.sections:
        if not section.text.strip():
            continue
        heading = _fit_heading(" > ".join(section.heading_path), counter, max_tokens)
        header = counter.count(Chunk("", doc.path, doc.title, heading, "", 0, 0).embed_text()) + 1
        budget = max(MIN_BODY_TOKENS, max_tokens - header)
        for text, start, end, used in _pack(_units(section), budget, min(overlap, budget // 4), counter):
            # embed_text() is the heading, a newline and the text: counted apart, they add up
            fits = adds_up and used is not None and counter.specials + header - 1 + used <= max_tokens
            for piece in [(text, start, end)] if fits else _verified(doc, heading, text, start, end,
                                                                     max_tokens, counter):
                occurrence = seen[(heading, piece[0])]
                seen[(heading, piece[0])] += 1
                chunks.append(Chunk(
                    id=chunk_id(doc.path, heading, piece[0], occurrence), path=doc.path,
                    title=doc.title, heading=heading, text=piece[0], line_start=piece[1],
                    line_end=piece[2], page=section.page, ordinal=len(chunks)))
    return chunks


class _Counter:
    """count_tokens minus the special tokens ([CLS], [SEP]) the tokenizer adds to any text."""

    def __init__(self, count_tokens: Callable[[str], int]):
        self.count_tokens = count_tokens
        self.specials = count_tokens("")

    def count(self, text: str) -> int:
        return max(0, self.count_tokens(text) - self.specials)

    def cost(self, unit: _Unit) -> int:
        if unit.cost < 0:
            unit.cost = self.count(unit.text)
        return unit.cost


def _fit_heading(heading: str, counter: _Counter, max_tokens: int) -> str:
    # A heading path that eats most of the budget (deep nesting, a pasted paragraph as a
    # heading) would leave no room for text: keep its first and last parts, then cut.
    if len(heading) < max_tokens and counter.count(heading) <= max_tokens // 3:
        return heading
    parts = heading.split(" > ")
    if len(parts) > 2:
        heading = f"{parts[0]} > … > {parts[-1]}"
    while counter.count(heading) > max_tokens // 3 and len(heading) > 8:
        heading = heading[: len(heading) * 2 // 3] + "…"
    return heading


# ---------------------------------------------------------------- units


def _units(section: Section) -> list[_Unit]:
    """Paragraphs and whole code fences, with their lines in the file."""
    lines = section.text.split("\n")

    def line_no(i: int) -> int:  # embed sections hold many lines on one line of the file
        return min(section.line_start + i, section.line_end)

    units: list[_Unit] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        fence = _FENCE.match(lines[i])
        j = _fence_end(lines, i, fence.group(1)) if fence else _paragraph_end(lines, i)
        text = "\n".join(line.rstrip() for line in lines[i:j]).strip("\n")
        if _HAS_WORD.search(text):
            units.append(_Unit(text, line_no(i), line_no(j - 1), "code" if fence else "para"))
        i = j
    return units


def _fence_end(lines: list[str], i: int, marker: str) -> int:
    closer = re.compile(r"^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}\s*$")
    for j in range(i + 1, len(lines)):
        if closer.match(lines[j]):
            return j + 1
    return len(lines)  # unclosed: the fence runs to the end of the section


def _paragraph_end(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and lines[j].strip() and not _FENCE.match(lines[j]):
        j += 1
    return j


def _split(unit: _Unit) -> list[_Unit]:
    """One level finer: list → its items (each with its nested lines), paragraph → sentences,
    code → lines, sentence → words, word → chars. A list cut into sentences would be joined
    back as one line of " - " runs, and read as a paragraph, not as items, by the evidence.
    A list led by a line of its own ("Table rows:", "Steps:") is cut the same way, the lead
    line a piece of its own: a list item interrupts a paragraph in Markdown."""
    if unit.kind == "para" and (_LIST_ITEM.match(unit.text) or _ITEM_START.search(unit.text)):
        parts = _split_at(unit, _ITEM_START, "line")
        if len(parts) > 1:
            return parts
    if unit.kind == "para" and all(_TABLE_ROW.match(ln) for ln in unit.text.split("\n")):
        parts = _split_at(unit, re.compile(r"\n"), "line")  # a table is cut between its rows
        if len(parts) > 1:
            return parts
    if unit.kind in ("para", "code"):
        pattern = _SENTENCE_END if unit.kind == "para" else re.compile(r"\n")
        parts = _split_at(unit, pattern, "sentence" if unit.kind == "para" else "line")
        if len(parts) > 1:
            return parts
    if unit.kind != "word" and unit.kind != "chars":
        parts = _split_at(unit, _WORD, "word", keep_matches=True)
        if len(parts) > 1:
            return parts
    step = max(1, len(unit.text) // 2)
    return [_Unit(unit.text[k:k + step], unit.line_start, unit.line_end, "chars")
            for k in range(0, len(unit.text), step)]


def _split_at(unit: _Unit, pattern: re.Pattern[str], kind: str, keep_matches: bool = False) -> list[_Unit]:
    pieces: list[tuple[int, str]] = []
    if keep_matches:
        pieces = [(m.start(), m.group(0)) for m in pattern.finditer(unit.text)]
    else:
        pos = 0
        for m in pattern.finditer(unit.text):
            pieces.append((pos, unit.text[pos:m.start()]))
            pos = m.end()
        pieces.append((pos, unit.text[pos:]))
    out, newlines, last = [], 0, 0
    for offset, text in pieces:
        newlines += unit.text.count("\n", last, offset)
        last = offset
        if text.strip():
            line = min(unit.line_start + newlines, unit.line_end)
            end = min(line + text.count("\n"), unit.line_end)
            out.append(_Unit(text.strip() if kind != "line" else text.rstrip(), line, end, kind))
    return out


# ---------------------------------------------------------------- packing


def _fits(unit: _Unit, budget: int, counter: _Counter) -> bool:
    if len(unit.text) > budget * MAX_CHARS_PER_TOKEN:
        return False  # surely over budget: split without paying for a count
    return counter.cost(unit) <= budget


def _flatten(units: list[_Unit], budget: int, counter: _Counter) -> list[_Unit]:
    """Split every unit until each fits the budget on its own."""
    out: list[_Unit] = []
    stack = list(reversed(units))
    while stack:
        unit = stack.pop()
        if _fits(unit, budget, counter) or (unit.kind == "chars" and len(unit.text) <= 1):
            out.append(unit)
        else:
            stack.extend(reversed(_split(unit)))
    return out


def _join(units: list[_Unit]) -> str:
    text = ""
    for prev, unit in zip([None] + units[:-1], units):
        if prev is None:
            text = unit.text
        elif unit.kind in ("para", "code") or prev.kind in ("para", "code"):
            # as many line breaks as the file has between them (a rule, blank lines, a fence right
            # after its lead-in), so the chunk's lines stay the file's lines; an embed's paragraphs
            # all stand on its one line, and stay paragraphs
            gap = unit.line_start - prev.line_end
            text += ("\n" * gap if gap >= 1 else "\n\n") + unit.text
        elif unit.kind in ("line",):  # a blank line between them stays: "Table rows:" after a
            # list would else read as the last item's lazy continuation, not as the next list's lead
            text += ("\n\n" if unit.line_start > prev.line_end + 1 else "\n") + unit.text
        elif unit.kind == "chars":
            text += unit.text
        elif unit.line_start > prev.line_end:  # a sentence that began a line of the note still does,
            text += "\n" + unit.text  # so the chunk's lines stay the file's lines
        else:
            text += " " + unit.text
    return text


def _pack(units: list[_Unit], budget: int, overlap: int,
          counter: _Counter) -> list[tuple[str, int, int, int | None]]:
    """Greedy packing; each piece after the first starts with the previous piece's tail.
    Each piece comes with the sum of its units' counts, None when it joins characters
    inside a word (a sum that need not add up)."""
    pieces: list[tuple[str, int, int, int | None]] = []
    current: list[_Unit] = []
    used = 0
    for unit in _flatten(units, budget, counter):
        cost = counter.cost(unit)
        if current and used + cost > budget:
            pieces.append(_piece(current, used))
            tail = (_tail_lines(current, overlap) if current[-1].kind == "line"  # items overlap whole, or not
                    else _tail(pieces[-1][0], overlap, counter, current[-1].line_end))
            current, used = ([tail], tail.cost) if tail and tail.cost + cost <= budget else ([], 0)
        current.append(unit)
        used += cost
    if current:
        pieces.append(_piece(current, used))
    return pieces


def _piece(units: list[_Unit], used: int) -> tuple[str, int, int, int | None]:
    joined_in_words = any(u.kind == "chars" for u in units)
    return _join(units), units[0].line_start, units[-1].line_end, None if joined_in_words else used


def _tail_lines(units: list[_Unit], overlap: int) -> _Unit | None:
    """The last whole lines (list items) of a piece that ends in lines, within ``overlap``
    tokens: the next piece then opens on an item, not on the last words of one."""
    kept: list[_Unit] = []
    for unit in reversed(units):
        if unit.kind != "line" or sum(u.cost for u in kept) + unit.cost > overlap:
            break
        kept.insert(0, unit)
    if not kept:
        return None
    return _Unit(_join(kept), kept[0].line_start, kept[-1].line_end, "line",
                 sum(u.cost for u in kept))


def _tail(text: str, overlap: int, counter: _Counter, line: int) -> _Unit | None:
    """The last words of text, about `overlap` tokens of them."""
    if overlap <= 0:
        return None
    words = text.split()
    n = max(1, overlap * 3 // 4)  # English prose runs ~1.3 word pieces per word
    while n > 0:
        tail = " ".join(words[-n:])
        cost = counter.count(tail)
        if cost <= overlap:
            return _Unit(tail, line, line, "sentence", cost)
        n = min(n - 1, n * overlap // max(cost, 1))
    return None


def _verified(doc: Document, heading: str, text: str, start: int, end: int, max_tokens: int,
              counter: _Counter) -> list[tuple[str, int, int]]:
    """Check the real count of the embedded text once; halve a piece that came out over."""
    probe = Chunk("", doc.path, doc.title, heading, text, start, end)
    if counter.count_tokens(probe.embed_text()) <= max_tokens or len(text) < 2:
        return [(text, start, end)]
    lines, words = text.split("\n"), text.split(" ")
    if len(lines) > 1:  # between lines rather than inside one; before a list item when it can
        cuts = [i for i in range(1, len(lines)) if _LIST_ITEM.match(lines[i])] or range(1, len(lines))
        cut = min(cuts, key=lambda i: abs(i - len(lines) / 2))
        left, right = "\n".join(lines[:cut]), "\n".join(lines[cut:])
    elif len(words) > 1:
        cut = len(words) // 2
        left, right = " ".join(words[:cut]), " ".join(words[cut:])
    else:
        left, right = text[: len(text) // 2], text[len(text) // 2:]
    mid = min(end, start + left.count("\n"))
    after = min(end, mid + 1) if len(lines) > 1 else mid  # a cut between lines starts the next one
    return (_verified(doc, heading, left, start, mid, max_tokens, counter)
            + _verified(doc, heading, right, after, end, max_tokens, counter))
