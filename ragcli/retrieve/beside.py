"""The sentence after a quote that it needs, read from its section's chunks once the quotes are
chosen: for "how do I", a step with the sentence after it that goes on about it, or a sentence
saying what a thing is with the step after it (``with_sentence_after``). Only from the note's own
lines, like the blocks and lead-ins of ``rule_before``."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..types import Chunk, Quote
from ..words import query_terms, split_sentences
from ..words import asks_how
from .padding import gives_instruction
from .rule_before import PLAIN, file_lines

MAX_AFTER_CHARS = 160
# a line that is no more of a paragraph: a heading, callout, row, code, item, or a blank
_NOT_PROSE = re.compile(r"^\s*(?:[#>|`]|[-*+]\s|\d+[.)]\s|$)")
_RUNS_ON = 4  # lines a sentence may run on over in a wrapped paragraph (a PDF's)
_GOES_ON = re.compile(r"^(?:A|An|The)\s")


def with_sentence_after(quotes: Sequence[Quote], question: str,
                        section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """For "how do I ...", a step said in one sentence, with the sentence after it when that one
    goes on about what the step named: "You can make a callout foldable by adding a plus (`+`) or
    a minus (`-`) ..." then "A plus sign expands the callout by default, and a minus sign
    collapses it instead."; "To create a callout, add `[!info]` ..., where `info` is the _type
    identifier_." then "The type identifier determines how the callout looks and feels." It opens
    with "A", "An" or "The", holds a word of the step that the question does not, and is short."""
    if not asks_how(question):
        return list(quotes)
    asked = query_terms(question)
    out = []
    for q in quotes:
        if q.kind in ("sentence", "line"):
            others = [o.text for o in quotes if o is not q]
            q = _with_after(q, asked, section_chunks, others) if gives_instruction(q.text) \
                else _with_step_after(q, section_chunks, others)
        out.append(q)
    return out


MAX_STEP_CHARS = 240
# A quote that ends on a question the note asks ("**Can I use the commercial license ... on both
# my work phone and work computer?** Yes."), bare or with at most a word or two of answer after it
_ENDS_ASKING = re.compile(r"\?[*_]*(?:\s+\S+){0,2}\s*$")


def with_answer_after(quotes: Sequence[Quote],
                      section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """A quote that is a question the note asks (its FAQ), with the sentence after it, where the
    note answers: "Yes." alone says nothing of "The commercial license is charged per seat count,
    not per device." A quote ending on a question answers only when its answer is shown."""
    out = []
    for q in quotes:
        if q.kind in ("sentence", "line", "passage") and _ENDS_ASKING.search(q.text.strip()):
            after, end = _next_sentence(q, section_chunks(q.path, q.heading))
            if after and len(after) <= MAX_STEP_CHARS and not any(after in o.text for o in quotes):
                q = replace(q, text=f"{q.text.rstrip()} {after}", line_end=end)
        out.append(q)
    return out


def _with_step_after(quote: Quote, section_chunks, others: Sequence[str]) -> Quote:
    """For "how do I", a sentence that says what a thing is ("Nested tags define tag hierarchies
    ..."), with the step that follows it on the same thing ("Create nested tags by using forward
    slashes (`/`) in the tag name, for example `#inbox/to-read`"): the definition names the
    task, the step does it."""
    after, end = _next_sentence(quote, section_chunks(quote.path, quote.heading))
    if not after or len(after) > MAX_STEP_CHARS or not gives_instruction(after):
        return quote
    if not query_terms(after) & query_terms(quote.text) or any(after in text for text in others):
        return quote
    return replace(quote, text=f"{quote.text.rstrip()} {after}", line_end=end)


def _with_after(quote: Quote, asked: set[str], section_chunks, others: Sequence[str]) -> Quote:
    after, end = _next_sentence(quote, section_chunks(quote.path, quote.heading))
    if not after or len(after) > MAX_AFTER_CHARS or not _GOES_ON.match(after):
        return quote
    if any(after in text for text in others):  # another quote says it (a table's lead-in): once
        return quote
    if not (query_terms(after) & query_terms(quote.text)) - asked:
        return quote
    return replace(quote, text=f"{quote.text.rstrip()} {after}", line_end=end)


def _next_sentence(quote: Quote, chunks: Sequence[Chunk]) -> tuple[str, int]:
    """The sentence after the quote in its note, with the file line it ends on: the rest of its
    paragraph (read on over the lines the paragraph wraps over, as a PDF's and many notes' do),
    or else the paragraph that starts after one blank line (its first sentence)."""
    for chunk, lines in file_lines(quote, chunks):
        k = quote.line_end - chunk.line_start
        if not 0 <= k < len(lines):
            continue
        tail = _tail_in(quote.text, lines[k])
        rest = lines[k][lines[k].find(tail) + len(tail):].strip() if tail else ""
        if rest:
            return _first_sentence(lines, k, rest, quote.line_end)
        if tail and k + 1 < len(lines) and not _NOT_PROSE.match(lines[k + 1]):
            return _first_sentence(lines, k + 1, lines[k + 1].strip(), quote.line_end + 1)
        if k + 2 < len(lines) and not lines[k + 1].strip() and PLAIN.match(lines[k + 2]):
            return _first_sentence(lines, k + 2, lines[k + 2].strip(), quote.line_end + 2)
        return "", quote.line_end
    return "", quote.line_end


def _first_sentence(lines: list[str], k: int, text: str, line: int) -> tuple[str, int]:
    """The first sentence of ``text`` (line ``k`` of ``lines``, or its end; file line ``line``),
    read on over the next lines of its paragraph (``_RUNS_ON`` at most), with the file line it
    ends on; none when it does not end within them."""
    pieces, j = [(text, line)], k + 1
    while j < len(lines) and j - k <= _RUNS_ON and not _NOT_PROSE.match(lines[j]):
        pieces.append((lines[j].strip(), line + j - k))
        j += 1
    joined = " ".join(piece for piece, _ in pieces)
    first = split_sentences(joined)[0]
    if first == joined and j - k > _RUNS_ON:
        return "", line  # no end in sight
    used = 0
    for piece, end in pieces:
        used += len(piece) + 1
        if used > len(first):
            return first, end
    return first, pieces[-1][1]


def _tail_in(text: str, line: str) -> str:
    """The quote's last words as its last file line has them: a quote that runs over two lines
    is one line of text ("... work computer?** Yes." ends on "Yes.")."""
    words = text.strip().split("\n")[-1][-40:].split(" ")
    for j in range(len(words), 0, -1):
        tail = " ".join(words[-j:]).strip()
        if tail and tail in line:
            return tail
    return ""


# A sentence that adds to the one before ("... experienced substantial staffing challenges in FY
# 2016. In addition, the overflow call services contract ended in July 2016, resulting in a loss of
# approximately 20 trained contract staff."): the same point goes on, and the reader needs both
_ADDS_TO = re.compile(r"^(?:In addition|Additionally|Moreover|Furthermore|Also|Besides|What(?:'|’)s more)\b,?\s")
MAX_ADDED_CHARS = 240


def with_addition_after(quotes: Sequence[Quote],
                        section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """Each quoted sentence with the sentence after it when that one opens by adding to it ("In
    addition, ...", "Moreover, ...") and is short, unless another quote shows it already."""
    out = []
    for q in quotes:
        if q.kind in ("sentence", "line", "passage"):
            after, end = _next_sentence(q, section_chunks(q.path, q.heading))
            if _ADDS_TO.match(after) and len(after) <= MAX_ADDED_CHARS and not any(after in o.text for o in quotes):
                q = replace(q, text=f"{q.text.rstrip()} {after}", line_end=end)
        out.append(q)
    return out
