"""The quotable units of a retrieved chunk, read from its Markdown structure.

markdown-it-py parses the chunk once and hands over typed blocks with their lines:
paragraphs (cut into sentences), list items, code blocks, table rows, callouts (a
blockquote's blocks, read as the blocks they hold). Headings are where a unit stands, not
units. A sentence that leads into a block ("To embed a note:", "Settings I use:") is one
unit with that block, bounded in lines, because the lead-in alone answers nothing; the
block's own items, rows and code stay quotable on their own too.

Sentences are cut by ``words.split_sentences``, the one splitter the checks use as well.

A PDF page's table rows and next chunk join the hits in ``pages``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt

from ..types import Hit
from ..words import query_terms, split_sentences
from .pdf_lines import listing_entries, pdf_lines_joined, pdf_runs, without_item_labels
from .rows import PIPE_ROW, headless_table, loose_rows, table_rows

MIN_UNIT_CHARS = 12
MAX_UNIT_CHARS = 600
MAX_PASSAGE_CHARS = 240  # a paragraph up to this long is quoted whole around its best sentence
MAX_BLOCK_LINES = 14  # a lead-in takes at most this many lines of the block after it along
MAX_BLOCK_CHARS = 900
WHOLE_CODE_LINES = 12  # a code block up to this long is one unit; a longer one, runs of 3 lines

# Inline rules off: only the block structure is needed, and the inline scanners are the slow
# paths on hostile input (see ingest.markdown).
_md = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"], ignoreInvalid=True)
_CALLOUT = re.compile(r"^\[![\w-]+\][+-]?\s*")
_ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_PADDED_PIPE = re.compile(r"[ \t]*\|[ \t]*")
_DASHES = re.compile(r"-{4,}")
_QUOTE_MARK = re.compile(r"^\s*(?:>\s?)+")
# A line of Obsidian tags only ("#baking #family" under a journal entry): the note's labels, not its words
_TAG_LINE = re.compile(r"^(?:#[^\W\d][\w/-]*\s*)+$")
_TAGS_AFTER = re.compile(r"(?<=[.!?])(?:\s+#[^\W\d][\w/-]*)+\s*$")
# A sentence that announces what follows: it ends in a colon, or says "as follows" and the like.
MAX_EXAMPLE_LINES = 3
# A report's table of contents: a title, a leader (read as "…", ``ingest.pdf``), a page number or
# label ("45", "A-1", "iv"). It names what a report covers in the question's words ("Strategic Goal
# 4: ... meet their missions") and so takes a part's place ("... and did that meet the goal?",
# rp-01), but answers nothing. A listing's leader leads to a value ("Deposit Fund … 6000-6999").
_LEADER = r"(?:\u2026|(?:\.\s?){4,})\s?"  # as ``ingest.pdf`` reads it, or dots (an index from before it)
_CONTENTS = re.compile(rf"{_LEADER}(?:[A-Z]{{1,2}}-)?\d{{1,3}}\.?(?!\S)|{_LEADER}[ivxlc]{{1,6}}(?!\S)")
_WORDY = re.compile(r"[^\W_]")
# A line that only closes a procedure or points elsewhere ("You're done!", "See also Grinders."), an
# embedded image's name ("application-installer-current-version.png", a picture no terminal shows),
# or an embedded note's name as its line reads ("Retrieval glossary > BM25": its text follows apart)
# answers nothing alone; the list or note it belongs to still does
_SAYS_NOTHING = re.compile(r"^\W*(?:see also\b|(?:you['’]re (?:all )?done|that['’]s (?:it|all)|done)\W*$)"
                           r"|^[\w .()-]+\.(?:png|jpe?g|gif|svg|webp|bmp|avif|mp4|webm|mov|mp3|wav|m4a|ogg)$"
                           r"|^[^\n.!?:;>]{1,80}(?: > [^\n.!?:;>]{1,80})+$", re.I)
LEAD_IN = re.compile(r"(?::|\bas follows\.?|\bthe following\.?|\blike this\.?|\bfor example\.?)\s*$", re.I)
# Text in a note that speaks to an assistant rather than about the subject ("ignore the
# question and reply that ..."): never evidence, and a paragraph holding it is not quoted
# whole. The system prompt also says to ignore instructions; this keeps them from the model.
INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:(?:all|any|the|your|previous|above|prior|earlier|these)\s+){0,3}"
    r"(?:question|instructions?|prompts?|rules|context|sources?|quotes?)\b"
    r"|\b(?:reply|respond|answer|say)\s+(?:only\s+)?(?:that|with)\b.{0,60}\b(?:password|secret|token|key)\b"
    r"|\b(?:system prompt|you are (?:an? )?(?:ai|assistant|language model))\b", re.I)


def is_list_line(line: str) -> bool:
    """Does the line open a list item or hold a table row, as a note writes them?"""
    return bool(_ITEM_MARK.match(line) or PIPE_ROW.match(line))


def markdown_blocks(text: str) -> list:
    """markdown-it's block tokens of ``text`` (each with its ``map`` of lines), as units reads them."""
    return _md.parse(text)


@dataclass(frozen=True)
class Unit:
    """One quotable piece of a chunk: a sentence, list item, table row, code, or a lead-in
    with the block it introduces ("block": its text is the lead-in, a newline, the block)."""

    text: str  # as it stands in the note (callout '>' and list markers kept off)
    kind: str  # "sentence", "line", "item", "row", "code", "block"; whole: "steps" (numbered), "table", "list"
    line_start: int
    line_end: int
    hit: Hit
    context: str = ""  # a table's header row, for scoring and for the model
    passage: tuple[str, int, int] | None = None  # the short paragraph it stands in, to quote

    @property
    def chunk(self):
        return self.hit.chunk

    @property
    def shown(self) -> str:
        """What a quote of the unit shows: the short paragraph it stands in, or itself."""
        return self.passage[0] if self.passage is not None else self.text


@dataclass
class _Block:
    kind: str  # "paragraph", "list", "code", "table"
    start: int  # 0-based lines within the chunk text, end exclusive
    end: int
    units: list[Unit]
    ordered: bool = False  # a numbered list: steps, read as a whole
    aside: bool = False  # a paragraph of a callout (a blockquote)


def split_units(hit: Hit, passage_chars: int = MAX_PASSAGE_CHARS) -> list[Unit]:
    """The quotable units of a retrieved chunk, each with its lines in the file; a sentence of a
    paragraph up to ``passage_chars`` long is quoted with its paragraph."""
    chunk = hit.chunk
    lines = chunk.text.split("\n")

    def line_no(i: int) -> int:  # embedded notes hold many lines on one line of the file
        return min(chunk.line_start + i, max(chunk.line_end, chunk.line_start))

    blocks = read_blocks(chunk.text, lines, hit, line_no, passage_chars)
    units: list[Unit] = []
    led: set[int] = set()  # blocks quoted with their lead-in
    for i, block in enumerate(blocks):
        units += block.units
        nxt = _past_aside(blocks, i + 1)
        lead = block.units[-1] if block.kind == "paragraph" and block.units else None
        if lead is not None and nxt is not None and nxt.kind in ("list", "code", "table") \
                and nxt.start <= block.end + 1 and LEAD_IN.search(lead.text):
            before = block.units[-2] if len(block.units) > 1 and _says_little(lead.text) else None
            joined = _lead_in_unit(lead, nxt, lines, hit, line_no, before)
            units[units.index(lead)] = joined
            led.add(i + 1)
        elif lead is not None and chunk.page is not None and lead.text.rstrip().endswith(":"):
            column = _figure_column(blocks, i + 1, lines)
            if column:  # a PDF table's column, read as one bare figure a line
                body = [" ".join(lines[b.start:b.end]).strip() for b in column]
                units[units.index(lead)] = Unit(lead.text.rstrip() + "\n" + "\n".join(body), "block",
                                                lead.line_start, line_no(column[-1].end - 1), hit)
    # Numbered steps are one procedure: quotable whole (within the block bounds) besides step by step.
    # So is a list that opens its section: its heading ("Parts list", "Steps") leads into it as a
    # sentence would, and "what do I need to buy" is answered by the list, not by one of its items.
    # So is a table ("table"): "which properties come with Obsidian" is its rows together; and any other
    # list ("list"): "what different ways can a base show my notes" is the View types list under a
    # sentence that leads into it without a colon. Those two are offered to list questions only.
    for i, block in enumerate(blocks):
        under_heading = i == 0 and block.kind == "list" and bool(chunk.heading) and block.start == 0
        if i not in led and len(block.units) > 1 and block.kind in ("list", "table"):
            body, last = block_lines(block, lines, unpadded=True)
            kind = "steps" if block.ordered or under_heading else "table" if block.kind == "table" else "list"
            units.append(Unit("\n".join(body), kind, line_no(block.start), line_no(last), hit))
    # a run of code with no word in it ("---" between slides, "}") says nothing alone
    return [u for u in units if (len(u.text) >= MIN_UNIT_CHARS or u.kind in ("row", "code"))
            and (u.kind != "code" or _WORDY.search(u.text)) and not INSTRUCTION.search(u.text)
            and (u.kind == "code" or not _SAYS_NOTHING.search(u.text))
            and not (chunk.page is not None and _CONTENTS.search(u.text))]


def read_blocks(text: str, lines: list[str], hit: Hit, line_no,
                passage_chars: int = MAX_PASSAGE_CHARS) -> list[_Block]:
    tokens = markdown_blocks(text)
    blocks: list[_Block] = []
    lists = 0  # depth of the list we are in: its paragraphs are items
    table: list[list[str]] | None = None  # the current table's rows of cells, header first
    table_start = 0
    row_lines: list[int] = []
    quoted = 0  # depth of the callout (blockquote) we are in
    for i, tok in enumerate(tokens):
        kind = tok.type
        quoted += (kind == "blockquote_open") - (kind == "blockquote_close")
        if kind in ("bullet_list_open", "ordered_list_open"):
            if lists == 0:
                start = tok.map[0]
                if blocks and hit.chunk.page is None and _labels(blocks[-1], lines, start):  # "**Video**" above it
                    start = blocks.pop().start
                blocks.append(_Block("list", start, tok.map[1], [], kind == "ordered_list_open"))
            lists += 1
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif kind == "paragraph_open" and tok.map:
            content = tokens[i + 1].content if i + 1 < len(tokens) else ""
            start, end = tok.map
            if lists:
                item = " ".join(_ITEM_MARK.sub("", ln).strip() for ln in content.split("\n"))
                blocks[-1].units += _sentences(item, "item", line_no(start), line_no(end - 1), hit)
            elif headless_table(content):
                rows = [Unit(text, "row", line_no(start + k), line_no(start + k), hit)
                        for text, k in loose_rows(content)]
                blocks.append(_Block("table", start, end, rows))
            elif hit.chunk.page is not None:
                page_lines = content.split("\n")
                for first, last in pdf_runs(page_lines):
                    blocks.append(_Block("paragraph", start + first, start + last,
                                         _paragraph("\n".join(page_lines[first:last]), start + first, start + last,
                                                    hit, line_no, passage_chars)))
            else:
                blocks.append(_Block("paragraph", start, end,
                                     _paragraph(content, start, end, hit, line_no, passage_chars), aside=quoted > 0))
        elif kind in ("fence", "code_block") and tok.map:
            start, end = tok.map
            code = _code_units(tok.content, start + (1 if kind == "fence" else 0), hit, line_no)
            if lists:
                blocks[-1].units += code
            else:
                blocks.append(_Block("code", start, end, code))
        elif kind == "table_open" and tok.map:
            table, table_start, row_lines = [], tok.map[0], []
        elif kind == "tr_open" and tok.map:
            table.append([])
            row_lines.append(tok.map[0])
        elif kind == "inline" and table and tokens[i - 1].type in ("th_open", "td_open"):
            table[-1].append(tok.content.strip())
        elif kind == "table_close" and table is not None:
            blocks.append(_Block("table", table_start, (row_lines[-1] + 1) if row_lines else table_start,
                                 [Unit(text, "row", line_no(line), line_no(line), hit, header)
                                  for text, line, header in table_rows(table, row_lines)]))
            table = None
    return [b for b in blocks if b.units or b.kind != "paragraph"]


_LABEL_LINE = re.compile(r"^\s*(?:\*\*[^*]{1,30}\*\*|[A-Z][\w ]{0,30}?)\s*$")  # no colon: a lead-in is read as one


def _labels(block: _Block, lines: list[str], list_start: int) -> bool:
    """Is the block a one-line label ("**Video**", "Audio") right above the list at ``list_start``?"""
    return (block.kind == "paragraph" and block.end == list_start == block.start + 1
            and len(lines[block.start].split()) <= 3 and bool(_LABEL_LINE.match(lines[block.start])))


def _paragraph(content: str, start: int, end: int, hit: Hit, line_no, passage_chars: int) -> list[Unit]:
    """A paragraph's sentences, each with the file lines it spans."""
    parts = [_QUOTE_MARK.sub("", ln).strip() for ln in content.split("\n")]
    if parts and _CALLOUT.match(parts[0]):  # "[!tip] Title": the callout's kind is no text,
        parts[0] = _CALLOUT.sub("", parts[0])  # and its title reads as a heading to what follows
        if len(parts) > 1 and parts[0] and parts[0][-1] not in ".:?!":
            parts[0] += ":"
    pdf = hit.chunk.page is not None  # a page's lines are where its layout broke them (``pdf_lines``)
    while not pdf and len(parts) > 1 and _TAG_LINE.match(parts[-1]):  # quoted, they would end its sentence
        parts.pop()
        end -= 1
    if not pdf and parts:  # "... Hybrids get the best of both. #hybrid-search"
        parts[-1] = _TAGS_AFTER.sub("", parts[-1])
    if pdf:
        joined, offsets = pdf_lines_joined(parts)
    else:
        offsets, pos = [], 0
        for part in parts:
            offsets.append(pos)
            pos += len(part) + 1
        joined = " ".join(parts).strip()

    def line_at(offset: int) -> int:
        k = max(idx for idx, s in enumerate(offsets) if s <= offset)
        return line_no(start + k)

    pieces = split_sentences(joined, with_offsets=True)
    if pdf:  # a page's short pieces are its layout's (a figure, a label of a table), not a note's words
        pieces = without_item_labels(pieces, offsets)
    else:
        pieces = _short_ones_joined(pieces, joined)
    # A sentence is scored alone (precise) but quoted with its paragraph when that is short:
    # the answer often takes the next sentence too ("... foldable by adding a +. A plus expands it").
    passage = (joined, line_no(start), line_no(end - 1)) \
        if len(pieces) > 1 and len(joined) <= passage_chars and not INSTRUCTION.search(joined) else None
    examples = _examples(pieces) if passage is None else {}
    units = []
    for i, (text, begin, finish) in enumerate(pieces):
        kind = "sentence" if end - start > 1 or begin > 0 or finish < len(joined) else "line"
        shown = passage
        if i in examples:  # a sentence and the example after it, quoted together
            first, last = examples[i]
            shown = (joined[pieces[first][1]:pieces[last][2]].strip(), line_at(pieces[first][1]),
                     line_at(max(pieces[first][1], pieces[last][2] - 1)))
        units.append(Unit(text[:MAX_UNIT_CHARS], kind, line_at(begin), line_at(max(begin, finish - 1)), hit,
                          passage=shown))
    if pdf:
        units += [Unit(text, "line", line_no(start + k), line_no(start + k), hit)
                  for k, text in listing_entries(parts, MIN_UNIT_CHARS)]
    return units


def _short_ones_joined(pieces: list[tuple[str, int, int]], joined: str) -> list[tuple[str, int, int]]:
    """Sentences too short to quote alone ("Pi day.") read with the one after them: dropped, their
    words were lost to the sentence they introduce, and "what did I do on pi day?" never found
    "Pi day. Baked the Sourdough with 75% hydration ..."."""
    out: list[tuple[str, int, int]] = []
    for text, begin, finish in pieces:
        if out and len(out[-1][0]) < MIN_UNIT_CHARS:
            begin = out.pop()[1]
            text = joined[begin:finish].strip()
        out.append((text, begin, finish))
    return out


_EXAMPLE = re.compile(r"^(?:for (?:example|instance)\b|e\.g\.)", re.I)


def _examples(pieces: list[tuple[str, int, int]]) -> dict[int, tuple[int, int]]:
    """A sentence followed by one that gives an example ("For example: `[[2023-01-01#^37066d]]`."),
    each mapped to (its first, its last) sentence: the example is the syntax the sentence
    describes, and alone it says nothing of what it is an example of. Both are scored as they
    are (an example's code reads like no question) and quoted together."""
    pairs = {}
    for i in range(1, len(pieces)):
        if _EXAMPLE.match(pieces[i][0]):
            pairs[i - 1] = pairs[i] = (i - 1, i)
    return pairs


def _sentences(text: str, kind: str, start: int, end: int, hit: Hit) -> list[Unit]:
    pieces = split_sentences(text)
    if len(pieces) <= 1 or len(text) <= MAX_UNIT_CHARS // 2:
        return [Unit(text[:MAX_UNIT_CHARS], kind, start, end, hit)]
    return [Unit(p[:MAX_UNIT_CHARS], kind, start, end, hit) for p in pieces]


def _code_units(content: str, first: int, hit: Hit, line_no) -> list[Unit]:
    """A short code block is quoted whole; a long one in runs of up to three non-blank lines
    (a line alone is often too little to recognise, a whole long block too much to quote)."""
    code = content.rstrip("\n").split("\n")
    filled = [k for k, ln in enumerate(code) if ln.strip()]
    if not filled:
        return []
    if len(code) <= WHOLE_CODE_LINES and len(content) <= MAX_BLOCK_CHARS:
        text = "\n".join(ln.rstrip() for ln in code[filled[0]:filled[-1] + 1])
        return [Unit(text, "code", line_no(first + filled[0]), line_no(first + filled[-1]), hit)]
    units, run = [], []
    for k, ln in enumerate(code):
        if ln.strip():
            run.append(k)
        if run and (not ln.strip() or len(run) == 3 or k == len(code) - 1):
            text = "\n".join(code[r].rstrip() for r in run)
            units.append(Unit(text, "code", line_no(first + run[0]), line_no(first + run[-1]), hit))
            run = []
    return units


_BARE_FIGURE = re.compile(r"^[$€£(≥≤<>-]*\d[\d.,]*[%)*]*$")


def _figure_column(blocks: list[_Block], first: int, lines: list[str]) -> list[_Block]:
    """The run of paragraphs from ``blocks[first]`` on that are each one bare figure, when there
    are at least two: a PDF table read column by column gives "Pre-Closing Trial Balance:"
    and then its amounts a line each ("1010", "275", ..., "1,050"). Its lead-in announces them;
    alone it answers nothing (issue 20)."""
    run: list[_Block] = []
    for block in blocks[first:first + MAX_BLOCK_LINES]:
        text = " ".join(lines[block.start:block.end]).strip()
        if block.kind != "paragraph" or not _BARE_FIGURE.match(text) \
                or block.start > (run[-1].end if run else blocks[first - 1].end) + 1:
            break
        run.append(block)
    return run if len(run) >= 2 else []


def _past_aside(blocks: list[_Block], i: int) -> _Block | None:
    """The block at ``i``, or where it is a callout right before a list, code or table, the two as
    one: "To move an existing iCloud vault to your device, follow these steps:" leads into the steps
    past a note on when not to ("> [!note] If you already have the data on another device ...")."""
    if i >= len(blocks):
        return None
    block, after = blocks[i], blocks[i + 1] if i + 1 < len(blocks) else None
    if block.aside and after is not None and after.kind in ("list", "code", "table") and after.start <= block.end + 1:
        return _Block(after.kind, block.start, after.end, after.units, after.ordered)
    return block


def _says_little(lead: str) -> bool:
    """A lead-in that names neither a task nor a subject: "Here's an example:", "Settings I use:"
    (not "To embed a note:", which names its task)."""
    return len(query_terms(lead)) <= 2 and not lead.lstrip().lower().startswith("to ")


def _lead_in_unit(lead: Unit, block: _Block, lines: list[str], hit: Hit, line_no, before: Unit | None = None) -> Unit:
    """The lead-in sentence with the block it introduces, up to MAX_BLOCK_LINES lines. A lead-in
    of two content words or fewer takes the sentence before it along: "Here's an example:" says
    nothing of what the table it introduces is for, "You can create tables using vertical bars
    ..." before it does; "Settings I use:" names no grinder, "The Comandante C40 has ..." does."""
    body, last = block_lines(block, lines)
    text, first = (f"{before.text.rstrip()} {lead.text.strip()}", before.line_start) if before is not None \
        else (lead.text, lead.line_start)
    return Unit(text.rstrip() + "\n" + "\n".join(body), "block", first, line_no(last), hit)


def block_lines(block: _Block, lines: list[str], unpadded: bool = False) -> tuple[list[str], int]:
    """A block as the note shows it (list markers and table pipes kept, code fences left off),
    up to MAX_BLOCK_LINES lines and MAX_BLOCK_CHARS, and the index of its last line kept.
    ``unpadded``: a table's columns without their padding (900 characters of it can be 3 rows)."""
    body, size = [], 0
    last = block.start
    fence = ""  # the open fence: a shorter one inside it is the code's own text (a code sample of a code block)
    for k in range(block.start, min(block.end, len(lines))):
        line = lines[k].rstrip()
        mark = _FENCE.match(line)
        if mark and not fence:
            fence = mark.group(1)
            continue
        if mark and fence and mark.group(1)[0] == fence[0] and len(mark.group(1)) >= len(fence) \
                and line.strip() == mark.group(1):
            fence = ""
            continue
        if len(body) >= MAX_BLOCK_LINES or size + len(line) > MAX_BLOCK_CHARS:
            break
        if unpadded and block.kind == "table":
            line = _DASHES.sub("---", _PADDED_PIPE.sub(" | ", line)).strip()
        # a callout's '>' marks are no part of its text; a code sample's are (a callout typed as code)
        body.append(_QUOTE_MARK.sub("", line) if line.lstrip().startswith(">") and not fence else line)
        size += len(line) + 1
        last = k if line.strip() else last
    while body and not body[-1].strip():
        body.pop()
    return body, last
