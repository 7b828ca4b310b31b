"""A section's opening sentence beside a quote from further down the section: the sentence that
says what the section is for. Asked "can I make a to-do list with checkboxes in a note?", the
sentence closest to the question is "You can toggle a task in Reading view by selecting the
checkbox.", the last of "Task lists"; the section opens with the answer, "To create a task list,
start each list item with a hyphen and space followed by `[ ]`.", which shares only "list" with
the question. Read from the note's own lines once the gate has judged the quotes, as ``caveat``
and ``beside`` do, so an opening sentence never decides what is refused."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..types import Chunk, Quote
from ..words import query_terms, split_sentences
from .caveat import in_place
from .rule_before import PLAIN, section_lines

MAX_LEAD_WORDS = 40  # an opening sentence, not a paragraph
# A purpose or a condition, then what to do: "To create a task list, start ...", "For improved
# access control on your publish site, apply a site password.", "If you know another language,
# ..., you can help translate ...". An opening that says what a thing is ("Slides is a core plugin
# that ...") or what happens by default only adds words to read (bench: the answers and users sets
# read 9 words more for it and kept no more of the reference).
_PURPOSE = re.compile(r"^(?:To|For|If)\s[^.:;]{2,150}?,\s+\S")


def with_section_leads(quotes: Sequence[Quote], question: str,
                       section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """Each quoted note section's opening sentence, placed by its line among the quotes, when a
    quote stands further down that section, no quote shows it, it speaks of something the
    question names, and it is a sentence of its own (a lead-in ending in a colon promises a
    block that ``rule_before`` would have to add)."""
    asked = query_terms(question)
    out = list(quotes)
    done = set()
    for quote in quotes:
        if quote.page is not None or (quote.path, quote.heading) in done:
            continue
        done.add((quote.path, quote.heading))
        own = [c for c in section_chunks(quote.path, quote.heading) if c.heading == quote.heading]
        line, lead = _opening(quote, own)
        if not lead or line >= quote.line_start or lead.endswith(":") or len(lead.split()) > MAX_LEAD_WORDS \
                or not _PURPOSE.match(lead):
            continue
        if not query_terms(lead) & asked or any(_shows(q, line, lead) for q in out):
            continue
        out = in_place(out, replace(quote, text=lead, kind="sentence", line_start=line, line_end=line, context=""))
    return out


def _opening(quote: Quote, chunks: Sequence[Chunk]) -> tuple[int, str]:
    """The section's first line of text and its first sentence, when that line is prose (not a
    list, code, table, callout or embed)."""
    lines = section_lines(quote, chunks)
    for k in sorted(lines):
        text = lines[k].strip()
        if not text or text.startswith("#"):
            continue
        return (k, split_sentences(text)[0].strip()) if PLAIN.match(text) else (k, "")
    return 0, ""


def _shows(quote: Quote, line: int, lead: str) -> bool:
    return quote.line_start <= line <= quote.line_end or lead in quote.text
