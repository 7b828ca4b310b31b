"""Evidence: the passages of the retrieved chunks that answer the question, as exact quotes.

A chunk is ~200 tokens; the answer usually sits in one sentence, list item, table row or a
few lines of code. ``split_units`` cuts each retrieved chunk into such units, each with its
own file lines (and PDF page). ``select_quotes`` scores them against the question with what
is already loaded, no generator involved:
- meaning: cosine between the question and the unit (the embedding model; units are short,
  so they pack many to a llama.cpp batch), the unit read with its title and heading;
- words: the question's content words the unit holds, weighted by their idf in the index
  (a rare word shared says more than a common one);
- place: a small bonus for units of better-ranked chunks.
The best few, above a floor relative to the best, become numbered quotes. They are shown
before any generation, and they are all the generator is given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..types import Hit, Quote
from ..words import query_terms

MAX_UNITS = 48  # units embedded per question (the best by words, then by chunk rank)
MAX_QUOTES = 4
MAX_PER_CHUNK = 2
RELATIVE_FLOOR = 0.72  # a quote scores at least this share of the best quote's score
MIN_UNIT_CHARS = 12
MAX_UNIT_CHARS = 600
MAX_PASSAGE_CHARS = 360  # a paragraph up to this long is quoted whole around its best sentence
W_MEANING, W_WORDS, W_PLACE = 0.6, 0.35, 0.05

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_ROW = re.compile(r"^\s*\|.*\|\s*$")
_ROW_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_QUOTE_PREFIX = re.compile(r"^\s*(?:>\s?)+(?:\[![\w-]+\][+-]?\s*)?")
# A sentence ends at . ! ? followed by space and an upper-case letter, digit or quote; not
# after common abbreviations or a single initial ("e.g. the", "J. Smith").
# Text in a note that speaks to an assistant rather than about the subject ("ignore the
# question and reply that ..."): never evidence, and a paragraph holding it is not quoted
# whole. The system prompt also says to ignore instructions; this keeps them from the model.
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:(?:all|any|the|your|previous|above|prior|earlier|these)\s+){0,3}"
    r"(?:question|instructions?|prompts?|rules|context|sources?|quotes?)\b"
    r"|\b(?:reply|respond|answer|say)\s+(?:only\s+)?(?:that|with)\b.{0,60}\b(?:password|secret|token|key)\b"
    r"|\b(?:system prompt|you are (?:an? )?(?:ai|assistant|language model))\b", re.I)
_SENTENCE_END = re.compile(r"(?<!\b[A-Z])(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)(?<!\bcf)([.!?])\s+(?=[\"'(\[A-Z0-9])")


@dataclass(frozen=True)
class Unit:
    """One quotable piece of a chunk: a sentence, list item, table row or code line(s)."""

    text: str  # as it stands in the note (callout '>' and list markers kept off)
    kind: str  # "sentence", "item", "row", "code", "line"
    line_start: int
    line_end: int
    hit: Hit
    context: str = ""  # a table's header row, for scoring and for the model
    passage: tuple[str, int, int] | None = None  # the short paragraph it stands in, to quote

    @property
    def chunk(self):
        return self.hit.chunk


# ----------------------------------------------------------------------------- splitting


def split_units(hit: Hit) -> list[Unit]:
    """The quotable units of a retrieved chunk, each with its lines in the file."""
    chunk = hit.chunk
    lines = chunk.text.split("\n")

    def line_no(i: int) -> int:  # embedded notes hold many lines on one line of the file
        return min(chunk.line_start + i, max(chunk.line_end, chunk.line_start))

    units: list[Unit] = []
    header = ""
    i = 0
    while i < len(lines):
        raw = lines[i]
        fence = _FENCE.match(raw)
        if fence:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence.group(1)):
                j += 1
            units += _code_units(lines, i + 1, min(j, len(lines)), hit, line_no)
            i = j + 1
            continue
        text = _QUOTE_PREFIX.sub("", raw).strip()
        if not text or _HEADING.match(raw):
            header = "" if not text else header
            i += 1
            continue
        if _ROW.match(text):
            if _ROW_RULE.match(text):
                i += 1
                continue
            cells = _cells(text)
            if not header:  # the first row of a table names its columns
                header = " | ".join(cells)
                if i + 1 < len(lines) and _ROW_RULE.match(_QUOTE_PREFIX.sub("", lines[i + 1]).strip()):
                    i += 1
                    continue
            units.append(Unit(_row_text(cells, header), "row", line_no(i), line_no(i), hit, header))
            i += 1
            continue
        header = ""
        if _ITEM.match(text):
            j = i + 1  # an item goes on over indented continuation lines
            while j < len(lines) and lines[j].startswith(("  ", "\t")) and lines[j].strip() \
                    and not _ITEM.match(lines[j]):
                j += 1
            item = " ".join([_ITEM.sub("", text)] + [ln.strip() for ln in lines[i + 1:j]])
            units += _sentences(item, "item", line_no(i), line_no(j - 1), hit)
            i = j
            continue
        j = i + 1  # a paragraph: consecutive plain lines
        while j < len(lines):
            nxt = _QUOTE_PREFIX.sub("", lines[j]).strip()
            if not nxt or _HEADING.match(lines[j]) or _FENCE.match(lines[j]) or _ITEM.match(nxt) \
                    or _ROW.match(nxt):
                break
            j += 1
        units += _paragraph(lines, i, j, hit, line_no)
        i = j
    units = _join_lead_ins(units)
    return [u for u in units if (len(u.text) >= MIN_UNIT_CHARS or u.kind in ("row", "code"))
            and not _INSTRUCTION.search(u.text)]


def _join_lead_ins(units: list[Unit]) -> list[Unit]:
    """"Obsidian supports the following types:" says nothing without its list: a unit ending
    with a colon takes the items (or rows) right after it along, as long as it stays short."""
    out: list[Unit] = []
    i = 0
    while i < len(units):
        unit = units[i]
        if unit.kind in ("sentence", "line") and unit.text.rstrip().endswith(":"):
            j, parts, end = i + 1, [unit.text.rstrip()], unit.line_end
            while j < len(units) and units[j].kind in ("item", "row") and units[j].line_start <= end + 2 \
                    and sum(map(len, parts)) + len(units[j].text) < MAX_UNIT_CHARS:
                parts.append(units[j].text.rstrip(". ") + ";")
                end = units[j].line_end
                j += 1
            if j > i + 1:
                text = " ".join(parts).rstrip(";") + "."
                out.append(Unit(text, "list", unit.line_start, end, unit.hit))
                out.extend(units[i + 1:j])  # the items stay quotable on their own too
                i = j
                continue
        out.append(unit)
        i += 1
    return out


def _row_text(cells: list[str], header: str) -> str:
    """A table row as it reads: "Method: Espresso; Clicks: 8" when the header names each cell."""
    names = header.split(" | ") if header else []
    if len(names) == len(cells) and all(names):
        return "; ".join(f"{n}: {c}" for n, c in zip(names, cells) if c)
    return " | ".join(cells)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _code_units(lines: list[str], start: int, end: int, hit: Hit, line_no) -> list[Unit]:
    """Code lines, grouped in runs of up to three non-blank lines (a line alone is often too
    little to recognise, a whole block too much to quote)."""
    units, run = [], []
    for k in range(start, end):
        if lines[k].strip():
            run.append(k)
        if run and (not lines[k].strip() or len(run) == 3 or k == end - 1):
            text = "\n".join(lines[r].rstrip() for r in run)
            units.append(Unit(text, "code", line_no(run[0]), line_no(run[-1]), hit))
            run = []
    return units


def _paragraph(lines: list[str], i: int, j: int, hit: Hit, line_no) -> list[Unit]:
    """A paragraph's sentences, each with the file lines it spans."""
    starts, parts = [], []
    for k in range(i, j):  # character offset of each line in the joined paragraph
        starts.append(sum(len(p) + 1 for p in parts))
        parts.append(_QUOTE_PREFIX.sub("", lines[k]).strip())
    joined = " ".join(parts)

    def line_at(offset: int) -> int:
        k = max(idx for idx, s in enumerate(starts) if s <= offset)
        return line_no(i + k)

    pieces = _split_sentences(joined)
    # A sentence is scored alone (precise) but quoted with its paragraph when that is short:
    # the answer often takes the next sentence too ("... foldable by adding a +. A plus expands it").
    passage = (joined, line_no(i), line_no(j - 1)) if len(pieces) > 1 and len(joined) <= MAX_PASSAGE_CHARS \
        and not _INSTRUCTION.search(joined) else None
    units = []
    for text, begin, end in pieces:
        kind = "sentence" if j - i > 1 or begin > 0 or end < len(joined) else "line"
        units.append(Unit(text, kind, line_at(begin), line_at(max(begin, end - 1)), hit, passage=passage))
    return units


def _sentences(text: str, kind: str, start: int, end: int, hit: Hit) -> list[Unit]:
    pieces = _split_sentences(text)
    if len(pieces) <= 1 or len(text) <= MAX_UNIT_CHARS // 2:
        return [Unit(text[:MAX_UNIT_CHARS], kind, start, end, hit)]
    return [Unit(p, kind, start, end, hit) for p, _b, _e in pieces]


def _split_sentences(text: str) -> list[tuple[str, int, int]]:
    """(sentence, start offset, end offset) of each sentence of a paragraph."""
    result, begin = [], 0
    for m in _SENTENCE_END.finditer(text):
        end = m.end(1)
        piece = text[begin:end].strip()
        if piece:
            result.append((piece[:MAX_UNIT_CHARS], begin, end))
        begin = m.end()
    tail = text[begin:].strip()
    if tail:
        result.append((tail[:MAX_UNIT_CHARS], begin, len(text)))
    return result


# ----------------------------------------------------------------------------- scoring


def unit_context(unit: Unit) -> str:
    """What the embedding model reads for a unit: where it stands, then the unit."""
    chunk = unit.chunk
    head = chunk.heading or chunk.title
    if chunk.title and not head.startswith(chunk.title):
        head = f"{chunk.title} > {head}"
    body = f"{unit.context}\n{unit.text}" if unit.context else unit.text
    return f"{head}\n{body}" if head else body


def word_scores(question: str, units: Sequence[Unit], idf: Callable[[list[str]], dict[str, float]]) -> list[float]:
    """Share of the question's idf-weighted content words each unit holds (with its heading)."""
    terms = sorted(query_terms(question))
    if not terms:
        return [0.0] * len(units)
    # idf + 1: a rare word counts more, and a word in every chunk of a small index still counts.
    weights = {t: w + 1.0 for t, w in idf(terms).items()}
    total = sum(weights.get(t, 1.0) for t in terms) or 1.0
    scores = []
    for unit in units:
        have = query_terms(f"{unit.chunk.title} {unit.chunk.heading} {unit.context} {unit.text}")
        scores.append(sum(weights.get(t, 1.0) for t in terms if t in have) / total)
    return scores


def select_quotes(question: str, hits: Sequence[Hit], embed: Callable[[list[str]], np.ndarray],
                  idf: Callable[[list[str]], dict[str, float]], qvec: np.ndarray | None = None,
                  max_quotes: int = MAX_QUOTES) -> list[Quote]:
    """The few units that best answer ``question``, numbered from 1, best first."""
    units = _dedupe([u for hit in hits for u in split_units(hit)])
    if not units:
        return []
    words = word_scores(question, units, idf)
    # Embed only the most promising units: by words, then in chunk order.
    order = sorted(range(len(units)), key=lambda k: (-words[k], units[k].hit.rank, k))[:MAX_UNITS]
    texts = [unit_context(units[k]) for k in order]
    vectors = embed(([question] if qvec is None else []) + texts)
    q = qvec if qvec is not None else vectors[0]
    unit_vecs = vectors if qvec is not None else vectors[1:]
    scored = []
    for pos, k in enumerate(order):
        meaning = float(np.dot(unit_vecs[pos], q))
        place = 1.0 / math.sqrt(units[k].hit.rank or 1)
        scored.append((W_MEANING * meaning + W_WORDS * words[k] + W_PLACE * place, k))
    scored.sort(key=lambda s: -s[0])
    best = scored[0][0]
    chosen: list[tuple[float, Unit]] = []
    per_chunk: dict[str, int] = {}
    for score, k in scored:
        unit = units[k]
        if len(chosen) >= max_quotes or score < best * RELATIVE_FLOOR:
            break
        if per_chunk.get(unit.chunk.id, 0) >= MAX_PER_CHUNK:
            continue
        per_chunk[unit.chunk.id] = per_chunk.get(unit.chunk.id, 0) + 1
        chosen.append((score, unit))
    return [_quote(n, score, unit) for n, (score, unit) in enumerate(_dedupe_passages(chosen), 1)]


def _dedupe_passages(chosen: list[tuple[float, Unit]]) -> list[tuple[float, Unit]]:
    """Two sentences of one short paragraph make one quote (the paragraph), scored by the better."""
    seen, kept = set(), []
    for score, unit in chosen:
        key = (unit.chunk.path, unit.passage[1]) if unit.passage else None
        if key is not None and key in seen:
            continue
        if key is not None:
            seen.add(key)
        kept.append((score, unit))
    return kept


def _dedupe(units: list[Unit]) -> list[Unit]:
    """Overlapping chunks repeat text: keep each (file, lines, text) once, from the best hit."""
    seen, kept = set(), []
    for unit in sorted(units, key=lambda u: u.hit.rank):
        key = (unit.chunk.path, unit.line_start, " ".join(unit.text.split()))
        if key not in seen:
            seen.add(key)
            kept.append(unit)
    return kept


def _quote(n: int, score: float, unit: Unit) -> Quote:
    c = unit.chunk
    if unit.passage is not None:
        text, start, end = unit.passage
        return Quote(n, text, "passage", c.path, c.title, c.heading, start, end, c.page, score)
    return Quote(n, unit.text, unit.kind, c.path, c.title, c.heading, unit.line_start, unit.line_end,
                 c.page, score, unit.context)
