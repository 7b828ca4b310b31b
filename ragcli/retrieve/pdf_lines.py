"""How a PDF page's lines read as text. The reader gives a page's lines as the layout broke
them: a word cut at a line's end ("legisla-" / "tion"), and a register's entries (an account's
code and name a line) with no full stop between them. Markdown notes are never read so: their
lines are the note's own text.
"""

from __future__ import annotations

import re

from ..words import LIGATURES
from .spelling import is_known_word

_BROKEN = re.compile(r"([A-Za-z]+)-$")
_WORD_END = re.compile(r"[a-z]+")
_BROKEN_INSIDE = re.compile(r"\b([A-Za-z]+)- ([a-z]+)\b")


def pdf_lines_joined(parts: list[str]) -> tuple[str, list[int]]:
    """A PDF paragraph's lines as one text, and where each line starts in it. A word the layout
    broke at a line's end is whole again: "legisla-" + "tion" is "legislation" (a word of the
    embedding model's vocabulary), "Government-" + "wide" is "Government-wide" (none). Inside a
    line, "holi- day" is "holiday"; "short- and long-term" stays (no word "shortand")."""
    text, offsets = "", []
    for part in parts:
        # a break the reader already ran into its line: "the Emancipation Day holi- day"
        part = _BROKEN_INSIDE.sub(lambda m: m[1] + m[2] if is_known_word(m[1] + m[2]) else m[0], part)
        # the next line's first letters, when they may end a word: ASCII ones, as the broken word's,
        # a ligature read as its letters ("dif-" + "ﬁcult" is "difficult": BART's paper has it)
        rest = _WORD_END.match(part[:1].translate(LIGATURES) + part[1:])
        broken = _BROKEN.search(text) if rest is not None else None
        if broken is not None:
            if is_known_word(broken.group(1) + rest.group(0)):
                text = text[:-1]
            offsets.append(len(text))
            text += part
        else:
            if text:
                text += " "
            offsets.append(len(text))
            text += part
    return text, offsets


HEADING_WORDS = 8  # a PDF line of at most this many words, with no stop, may be a heading
PROSE_WORDS = 6  # ... when the line after it opens a sentence of at least this many words
_STOP = re.compile(r"[.!?:;,]\W*$")


def pdf_runs(parts: list[str]) -> list[tuple[int, int]]:
    """A PDF paragraph's runs of lines, (first, end) each, less the lines that head them: the
    reader gives a page's title and headings as lines of the paragraph below them ("Moka Pot
    Field Guide" / "Page 1: Filling the pot" / "Fill the bottom chamber ..."), and read on into
    its first sentence, they were quoted as "... Page 1: Filling the pot Fill the bottom
    chamber". A heading line is short, has no stop at its end, comes first or after a line that
    ends a sentence (or another heading), and the next line opens a sentence of some words."""
    def heading_like(line: str) -> bool:
        words = line.split()
        return 0 < len(words) <= HEADING_WORDS and not _STOP.search(line) and any(c.isalpha() for c in line) \
            and "\u2026" not in line  # a contents line: its leader leads to a page

    def opens_prose(line: str) -> bool:
        return line.strip()[:1].isupper() and len(line.split()) >= PROSE_WORDS

    def after_stop(k: int) -> bool:
        return k == 0 or bool(re.search(r"[.!?:]\W*$", parts[k - 1]))

    heads: set[int] = set()
    for k in range(len(parts) - 1):
        if heading_like(parts[k]) and opens_prose(parts[k + 1]):
            if after_stop(k):
                heads.add(k)
            elif k > 0 and heading_like(parts[k - 1]) and after_stop(k - 1):  # a title over its heading
                heads |= {k - 1, k}
    runs, first = [], 0
    for k in sorted(heads) + [len(parts)]:
        if k > first:
            runs.append((first, k))
        first = k + 1
    return runs or [(0, len(parts))]


LISTING_LINES = 4  # a PDF paragraph of this many lines or more, most of them entries, is a listing


def listing_entries(parts: list[str], min_chars: int) -> list[tuple[int, str]]:
    """A PDF paragraph whose lines mostly open with a code or a number and go on in words (a
    register of accounts, a list of codes and names) runs into one or two long "sentences" with
    no full stop: its entries are also quotable one by one. "014X5140 Historic Preservation Fund,
    National Park Service, Interior 16 U.S.C. 470h" is the answer, the run of ten entries around
    it is not. Prose has few lines that open so. Each entry as (its line's index, its text)."""
    entries = [(k, part) for k, part in enumerate(parts) if _ENTRY.match(part) and len(part) >= min_chars]
    if len(parts) < LISTING_LINES or len(entries) * 2 < len(parts):
        return []
    return entries


# An entry of a listing opens with its code or number ("014X5140", "5713.008", "12."), then words.
# Each code is read from its first digit ("[^\s\d]*\d"), so there is one way to match a run of
# them: "\S*\d\S*" had many, and a tax table's line of 32 figures with no word after them
# ("6,357 5,713 50,250 ...") took the matcher minutes, and `rag ask -k 7` with it.
_ENTRY = re.compile(r"^(?:[^\s\d]*\d\S*\s+)+\S*[A-Za-z]")


# The label of a list's next item, read onto the end of the item before it: "(IAP); j." where the
# page has "i. Approve ... (IAP);" and, on the next line, "j. Ensure ...".
_NEXT_LABEL = re.compile(r"\s(?:[a-z]|[ivx]{1,4}|\d{1,2})[.)]$")
_AFTER_ITEM = re.compile(r";(?:\s+(?:and|or))?$")  # an item ends so where the reader ran the lines into one


def without_item_labels(pieces: list[tuple[str, int, int]], offsets: list[int]) -> list[tuple[str, int, int]]:
    """A PDF paragraph's sentences (text, start, end), less the next item's label that the sentence
    splitter ends a sentence with when a lettered or numbered list runs on line by line: the label
    opens a line of the page (or follows the "; and" an item ends with, where the reader ran the
    lines into one), so it is the next item's, not the end of this one."""
    starts = set(offsets)
    out = []
    for text, begin, end in pieces:
        label = _NEXT_LABEL.search(text)
        if label is not None and (begin + label.start() + 1 in starts or _AFTER_ITEM.search(text[:label.start()])):
            text, end = text[:label.start()].rstrip(), begin + label.start()
        if text:
            out.append((text, begin, end))
    return out
