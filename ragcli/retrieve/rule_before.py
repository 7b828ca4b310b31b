"""What stands beside a quote in its note and belongs with it, read from the section's chunks
once the quotes are chosen:
- the block a lead-in introduces, when the chunker cut them apart, and the table under a paragraph
  whose header names what is asked (``complete_lead_ins``);
- the rule a lead-in's block illustrates, said just before the lead-in on its line
  (``with_rule_before``);
- the one-line paragraph above a code block, and the bold label above a numbered list
  (``with_line_above``);
- a table row's header, when the chunker cut the table between them (``with_row_headers``);
- for "how do I", a numbered list the chunker cut, whole (``with_whole_procedure``);
- a callout's title, ended by a colon as its `[!type]` mark ended it (``with_callout_titles``).
For "how do I", the sentence after a step is ``beside``'s.

"Tags can't contain blank spaces. To separate two or more words, you can instead use the
following formats:" then the list: the quote is the lead-in with its list, and the sentence
before it, the rule the list works around, is the answer's first half. "Make sure
`~/.local/bin` is in your PATH. Add the following to your `~/.bashrc` ... if it isn't:" then
the export line. The lead-in is scored alone (it names the task); the sentence before it is
shown with it, when the two open their paragraph on one line of the note and are short
together. Only from the note's own line, never across a chunk's cut: a chunk cut mid-paragraph
("indent** or **Fold heading**, depending on your needs. To toggle all sections ...:") has no
opening to show (session 6 tried a short paragraph whole as the lead-in and met that).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ..ingest.obsidian import callout_title
from ..types import Chunk, Hit, Quote
from ..words import query_terms
from ..words import asks_how
from .rows import PIPE_ROW, pipe_cells, row_text
from .units import LEAD_IN, MAX_BLOCK_CHARS, MAX_BLOCK_LINES, MAX_EXAMPLE_LINES, block_lines, read_blocks

MAX_LEAD_CHARS = 240  # the sentence before and the lead-in, together (a short paragraph's bound)
PLAIN = re.compile(r"^[A-Z]")  # a paragraph's line of prose: not an item, a row, code, a quote or a heading


def complete_lead_ins(quotes: Sequence[Quote], section_chunks: Callable[[str, str], Sequence[Chunk]],
                      question: str = "") -> list[Quote]:
    """A quote that leads into a block ("Install it from npm:") whose chunk ended before the
    block gets the block, from the next chunk of its section: the chunker cut between them, and
    the sentence alone promises the answer without giving it (the code after "To embed a note:").
    So does a paragraph followed at once by a table whose header names what the question asks
    for: "Which variables can I use in a template?" quotes "You can add dynamic information to
    your templates, using _template variables_ ...", and the table under it (`Variable |
    Description`) is the answer, though the sentence ends in a full stop."""
    out, made = [], []
    asked = query_terms(question)
    for quote in quotes:
        block = None
        lead = LEAD_IN.search(quote.text)
        if quote.kind not in ("block", "steps", "table", "list", "row") and (lead or asked):
            # a PDF's lines count from 1 on every page: the block must follow on the quote's own page
            block = _following_block(quote, [c for c in section_chunks(quote.path, quote.heading)
                                             if c.page == quote.page], None if lead else asked)
        if block is None:
            out.append(quote)
        else:
            body, last = block
            made.append(replace(quote, text=quote.text.rstrip() + "\n" + "\n".join(body), kind="block", line_end=last))
            out.append(made[-1])
    if not made:
        return out
    return _without_inside(out, made)


def _without_inside(quotes: list[Quote], made: list[Quote]) -> list[Quote]:
    """``quotes`` less those a block made here holds (a line of it quoted on its own too would be
    read twice), numbered again from 1."""
    kept = [q for q in quotes if not any(b is not q and b.path == q.path and b.line_start <= q.line_start
                                         and q.line_end <= b.line_end for b in made)]
    return [replace(q, n=n) for n, q in enumerate(kept, 1)]


def shown(quotes: Sequence[Quote], quote: Quote, line: int) -> bool:
    """Is ``line`` of ``quote``'s note (and page) shown already, in a quote of its own?"""
    return any(q.path == quote.path and q.page == quote.page and q.line_start <= line <= q.line_end for q in quotes)


def section_lines(quote: Quote, chunks: Sequence[Chunk]) -> dict[int, str]:
    """The note's lines the section's chunks hold, by line number (chunks overlap: one text a line)."""
    lines: dict[int, str] = {}
    for chunk, texts in file_lines(quote, chunks):
        lines.update((chunk.line_start + k, t) for k, t in enumerate(texts))
    return lines


def _following_block(quote: Quote, chunks: Sequence[Chunk], header_terms: set[str] | None = None
                     ) -> tuple[list[str], int] | None:
    """The list, code or table that starts on the line after ``quote`` (a blank line between
    allowed), as the note shows it, with its last line in the file. With ``header_terms`` (the
    quote leads in without saying so), only a table whose header row holds one of them. A callout
    between them comes along: "follow these steps:", then "> [!note] If you already have the data
    on another device ...", then the steps."""
    found = _block_after(quote, quote.line_end, chunks, header_terms)
    if found is None or not found[0]:
        return None
    body, last, block = found
    after = _block_after(quote, last, chunks, header_terms) if block.aside else None
    if after is not None and after[2].kind != "paragraph":  # past the callout, the block it stood before
        return body + [""] + after[0], after[1]
    return body, last


def _block_after(quote: Quote, end: int, chunks: Sequence[Chunk], header_terms: set[str] | None):
    """The list, code or table (or, after a colon, short paragraph) starting within two lines after
    line ``end``: its lines as the note shows them, its last line in the file, and the block."""
    for chunk in chunks:
        if chunk.line_end <= end or chunk.line_start > end + 2:
            continue
        lines = chunk.text.split("\n")

        def line_no(i: int, chunk: Chunk = chunk) -> int:
            return min(chunk.line_start + i, max(chunk.line_end, chunk.line_start))

        for block in read_blocks(chunk.text, lines, Hit(chunk, 0.0), line_no):
            if not end < line_no(block.start) <= end + 2:
                continue
            if header_terms is not None:
                header = lines[block.start] if block.kind == "table" else ""
                if not query_terms(" ".join(pipe_cells(header))) & header_terms:
                    return None
            # after a colon, a short paragraph is the example it announces ("For example:" then
            # "![[Document.pdf#height=400]]"); a longer one is the note going on
            example = (block.kind == "paragraph" and quote.text.rstrip().endswith(":")
                       and block.end - block.start <= MAX_EXAMPLE_LINES)
            if block.kind in ("list", "code", "table") or example:
                body, last = block_lines(block, lines)
                return body, line_no(last), block
            return None
    return None


def with_rule_before(quotes: Sequence[Quote], section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """The quotes, each lead-in with its block given the sentence before it on its line when
    that sentence opens the paragraph (module docstring)."""
    return [_with_rule(q, section_chunks) if q.kind == "block" else q for q in quotes]


_FENCE_LINE = re.compile(r"^\s*(?:`{3,}|~{3,})")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")  # |---|:--:|


def with_row_headers(quotes: Sequence[Quote], section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """A table row read without its header, each cell named by it: a long table is cut between
    rows, and a row of the second chunk ("**Recently closed tab** | `⌘`+`⇧`+`t` |
    `Ctrl`+`Shift`+`t`") does not say which keys are the Mac's. The header is the line above the
    table's rule (``|---|---|``), read from the section's earlier chunk."""
    out = []
    for quote in quotes:
        named = _named_row(quote, section_chunks(quote.path, quote.heading)) \
            if quote.kind == "row" and not quote.context and quote.page is None else None
        out.append(quote if named is None else replace(quote, text=named[0], context=named[1]))
    return out


def _named_row(quote: Quote, chunks: Sequence[Chunk]) -> tuple[str, str] | None:
    lines = section_lines(quote, chunks)
    if quote.line_start not in lines:
        return None
    row = pipe_cells(lines[quote.line_start])
    at = quote.line_start - 1
    while at in lines and PIPE_ROW.match(lines[at]) and not _TABLE_RULE.match(lines[at]):
        at -= 1
    if at not in lines or not _TABLE_RULE.match(lines[at]) or not PIPE_ROW.match(lines.get(at - 1, "")):
        return None
    header = pipe_cells(lines[at - 1])
    if len(header) != len(row) or not all(header):
        return None
    return row_text(row, header), " | ".join(header)


def with_line_above(quotes: Sequence[Quote], section_chunks: Callable[[str, str], Sequence[Chunk]]
                              ) -> list[Quote]:
    """A code block quoted from its first line, with the one-line paragraph just above it: "You
    can also embed specific headings and blocks." then `![[Internal links#^b15695]]`. The code
    alone does not say what it does; the sentence, though it ends in a full stop rather than
    the colon ``units`` reads as a lead-in, is what introduces it."""
    out = []
    for quote in quotes:
        chunks = section_chunks(quote.path, quote.heading)
        found = _sentence_above_code(quote, chunks) if quote.kind == "code" \
            else _label_above_steps(quote, chunks) if quote.kind == "steps" else None
        if found is None or shown(quotes, quote, found[1]):
            out.append(quote)
            continue
        sentence, line = found
        out.append(replace(quote, text=f"{sentence}\n{quote.text}", kind="block", line_start=line))
    return out


def _sentence_above_code(quote: Quote, chunks: Sequence[Chunk]) -> tuple[str, int] | None:
    """The line of prose, alone in its paragraph, that stands a blank line above the fence the
    quote's code opens with, and its line in the file."""
    for chunk, lines in file_lines(quote, chunks):
        k = quote.line_start - chunk.line_start
        if not 4 <= k < len(lines) or not _FENCE_LINE.match(lines[k - 1]):
            continue
        above, text, before = lines[k - 2], lines[k - 3].strip(), lines[k - 4]
        if above.strip() or before.strip() or not PLAIN.match(text) or text[-1] not in ".:" \
                or len(text) > MAX_LEAD_CHARS:
            return None
        return text, quote.line_start - 3
    return None


_ORDERED = re.compile(r"^\s{0,3}\d{1,2}[.)]\s")  # "1. Open Cloudflare ...", "2) Go to DNS"


def with_whole_procedure(quotes: Sequence[Quote], question: str,
                         section_chunks: Callable[[str, str], Sequence[Chunk]]) -> list[Quote]:
    """For "how do I", a numbered list the chunker cut, read whole from the section's chunks: the
    first of CloudFlare's seven steps ("1. Open Cloudflare to the domain ...") was quoted alone
    because steps 2 to 7 (the CNAME record, the proxy, the SSL mode) stood in the next chunk. A
    quote on a step, or on the part of the list its chunk held, becomes the list, within the
    bounds of a quoted block; a quote inside it is not shown twice."""
    if not asks_how(question):
        return list(quotes)
    out, made = [], []
    for quote in quotes:
        whole = _procedure(quote, section_chunks(quote.path, quote.heading)) \
            if quote.kind in ("item", "line", "sentence", "steps") and quote.page is None else None
        if whole is None:
            out.append(quote)
            continue
        body, first, last = whole
        made.append(replace(quote, text="\n".join(body), kind="steps", line_start=first, line_end=last))
        out.append(made[-1])
    if not made:
        return out
    return _without_inside(out, made)


def _procedure(quote: Quote, chunks: Sequence[Chunk]) -> tuple[list[str], int, int] | None:
    """The numbered list the quote's first line stands in, as the note shows it, when the quote
    holds only part of it and it fits a block's bounds; its first and last lines in the file."""
    lines = section_lines(quote, chunks)
    if not _ORDERED.match(lines.get(quote.line_start, "")):
        return None
    first = quote.line_start
    while _ORDERED.match(lines.get(first - 1, "")):
        first -= 1
    last = quote.line_end
    while _ORDERED.match(lines.get(last + 1, "")):
        last += 1
    body = [lines[k].rstrip() for k in range(first, last + 1)]
    if (first, last) == (quote.line_start, quote.line_end) or len(body) > MAX_BLOCK_LINES \
            or sum(len(b) + 1 for b in body) > MAX_BLOCK_CHARS:
        return None
    return body, first, last


_LABEL = re.compile(r"^\*\*[^*]{1,40}\*\*:?$")  # "**Desktop**", "**Mobile**:"


def _label_above_steps(quote: Quote, chunks: Sequence[Chunk]) -> tuple[str, int] | None:
    """The bold label on the line just above a numbered list quoted whole ("**Desktop**" then
    "1. In the upper-right corner of the note, ..."): two procedures for one task, one a
    platform, read without their labels do not say which is which."""
    for chunk, lines in file_lines(quote, chunks):
        k = quote.line_start - chunk.line_start
        if not 1 <= k < len(lines):
            continue
        at = k - 2 if k >= 2 and not lines[k - 1].strip() else k - 1  # a blank line may stand between
        label = lines[at].strip()
        above = lines[at - 1].strip() if at >= 1 else ""
        if not _LABEL.match(label) or (above and not above.startswith("#")):
            return None
        return label, chunk.line_start + at
    return None


def _with_rule(quote: Quote, section_chunks) -> Quote:
    lead, _, block = quote.text.partition("\n")
    chunks = section_chunks(quote.path, quote.heading)
    line, above = _line_and_above(quote, chunks)
    if line is not None and line.strip() == lead.strip() and _EXAMPLE.match(lead.strip()):
        return _with_point(quote, lead, block, chunks)
    if line is None or above.strip():  # no line to read, or the paragraph began on an earlier line
        return quote
    text = line.strip()
    before = text[: len(text) - len(lead.strip())].strip() if text.endswith(lead.strip()) else ""
    # a lead-in that opens on what was just said ("As a result, consider the following ...:") is
    # half a thought without it, so it takes a longer paragraph's opening along
    bound = MAX_LEAD_CHARS * (2 if _FOLLOWS_ON.match(lead.strip()) else 1)
    if not before or not before[0].isupper() or before[-1] not in ".!?" or len(before) + len(lead) > bound:
        return quote
    return replace(quote, text=f"{before} {lead.strip()}\n{block}")


# "For example, this will not work as expected:" then a `<div>` holding **bold**: the example, without
# the paragraph before it ("Obsidian does not render Markdown syntax inside HTML elements."), shows
# what goes wrong and not why
_EXAMPLE = re.compile(r"^(?:for (?:example|instance)|e\.g\.)[\s,]", re.I)


def _with_point(quote: Quote, lead: str, block: str, chunks: Sequence[Chunk]) -> Quote:
    """An example's lead-in with the one-line paragraph just above it, the point it illustrates,
    when that is prose and short (two lead-ins' bound)."""
    lines = section_lines(quote, chunks)
    point = lines.get(quote.line_start - 2, "").strip()
    if lines.get(quote.line_start - 1, "x").strip() or lines.get(quote.line_start - 3, "").strip() \
            or not PLAIN.match(point) or point[-1:] not in ".!?" or len(point) > 2 * MAX_LEAD_CHARS:
        return quote
    return replace(quote, text=f"{point} {lead.strip()}\n{block}", line_start=quote.line_start - 2)


_FOLLOWS_ON = re.compile(r"^(?:as a result|as such|because of this|for this reason|therefore|thus|this means|"
                         r"that means|that's why|so)\b", re.I)


def _line_and_above(quote: Quote, chunks: Sequence[Chunk]) -> tuple[str | None, str]:
    """The note's line the quote starts on, and the line above it, read from a chunk holding both;
    on the first line of its section's first chunk, nothing above (the heading is not text)."""
    first = next((c for c in chunks if c.heading == quote.heading and c.page == quote.page), None)
    for chunk, lines in file_lines(quote, chunks):
        k = quote.line_start - chunk.line_start
        if 1 <= k < len(lines):
            return lines[k], lines[k - 1]
        if k == 0 and chunk is first:
            return lines[0], ""
    return None, ""


def file_lines(quote: Quote, chunks: Sequence[Chunk]):
    """The chunks on the quote's page whose text lines are the note's lines (an embed's lines
    are not the file's), with those lines."""
    for chunk in chunks:
        lines = chunk.text.split("\n")
        if chunk.page == quote.page and len(lines) == chunk.line_end - chunk.line_start + 1:
            yield chunk, lines


# ----------------------------------------------------------------------------- a callout's title

def with_callout_titles(quotes: Sequence[Quote], section_chunks: Callable[[str, str], Sequence[Chunk]]
                        ) -> list[Quote]:
    """A quote that opens with a callout's title reads it as the label of what follows ("Note: If
    you can't see the Backlinks tab, ..."), not as the first words of its sentence ("Note If you
    can't see ..."): the parse keeps the title and drops the `[!note]` mark that ended it, and the
    title's line runs into the text below it. The index's line says whether the quote opens a
    quoted block at all; only then is the note's own line read (up to it), which must still open
    that callout. The index's text, and so every score, is as it was."""
    out = []
    for quote in quotes:
        title = _callout_title(quote) if quote.page is None and _opens_quoted_block(quote, section_chunks) else None
        if title and title[-1] not in ".:?!" and quote.text.startswith(title + " "):
            quote = replace(quote, text=f"{title}:{quote.text[len(title):]}")
        out.append(quote)
    return out


def _opens_quoted_block(quote: Quote, section_chunks) -> bool:
    line = section_lines(quote, section_chunks(quote.path, quote.heading)).get(quote.line_start, "")
    return line.lstrip().startswith(">")


def _callout_title(quote: Quote) -> str | None:
    try:
        with open(quote.path, encoding="utf-8", errors="replace") as f:
            line = next(itertools.islice(f, quote.line_start - 1, None), "")
    except OSError:  # moved or removed since it was indexed: the quote stays as indexed
        return None
    return callout_title(line.rstrip("\n"))
