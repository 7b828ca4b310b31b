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
from .evidence import asks_how
from .padding import gives_instruction
from .rule_before import PLAIN, file_lines

MAX_AFTER_CHARS = 160
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
    """The sentence after the quote in its note: the rest of its last line, or else the paragraph
    that starts after one blank line (its first sentence), with the file line it ends on."""
    for chunk, lines in file_lines(quote, chunks):
        k = quote.line_end - chunk.line_start
        if not 0 <= k < len(lines):
            continue
        tail = quote.text.strip().split("\n")[-1][-40:]
        at = lines[k].find(tail)
        rest = lines[k][at + len(tail):].strip() if at >= 0 else ""
        if rest:
            return split_sentences(rest)[0], quote.line_end
        if k + 2 < len(lines) and not lines[k + 1].strip() and PLAIN.match(lines[k + 2]):
            return split_sentences(lines[k + 2].strip())[0], quote.line_end + 2
        return "", quote.line_end
    return "", quote.line_end
