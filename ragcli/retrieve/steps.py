"""Numbered steps as one procedure, for "how do I" questions (``evidence.select_evidence``).

A step read alone ("Open **Settings**.", "You're done!") shares the words its heading gives
every unit of its section, and answers nothing; its list whole does. And a task is often done in
two lists under two headings of one note ("Export your data from Google Keep", then "Import your
Google Keep data into Obsidian"): the one whose heading shares fewer of the question's words
falls under the relative floor, though the answer needs it. Code is read the same way within
the lead-in quoted with it ("You can change it by adding text after the type identifier:").
Any short list is read whole in the same way when two of its items are chosen, or one item of a
list of three (``whole_lists``), and a list or table whole answers "what kinds are there"
(``is_list``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .once import inside
from .units import Unit, is_list_line

NUMBERED = re.compile(r"\s*\d{1,3}[.)]\s")
# When numbered steps answer "how do I" best, the note's other numbered steps are quoted at this
# share of their score: the export's steps, under "Export your data from Google Keep", share fewer
# of "move my google keep notes into obsidian" than the import's ("Obsidian").
STEPS_FLOOR = 0.7


def other_steps(whole: list[tuple[float, float, int]], units: Sequence[Unit], best: float) -> list[tuple[float, Unit]]:
    """When numbered steps answer "how do I" best, the numbered steps of the same note's other
    sections that score at least ``STEPS_FLOOR`` of them, taken before anything else fills the
    quotes: a task done in two steps has one under each heading ("Export your data from Google
    Keep", then "Import your Google Keep data into Obsidian")."""
    top = units[whole[0][2]]
    if top.kind != "steps" or not NUMBERED.match(top.text):
        return []
    return [(base, units[k]) for rank, base, k in whole[1:]
            if rank >= best * STEPS_FLOOR and units[k].kind == "steps" and units[k].chunk.path == top.chunk.path
            and units[k].chunk.heading != top.chunk.heading and NUMBERED.match(units[k].text)][:1]


def steps_holding(units: Sequence[Unit], order: Sequence[int]) -> dict[int, int]:
    """For each item embedded, the embedded "steps" unit (its numbered list whole) it is a step
    of; for each code unit, the lead-in quoted with it ("You can change it by adding text after
    the type identifier:" and its example), which says what the code does."""
    wholes = [k for k in order if units[k].kind == "block"
              or units[k].kind == "steps" and NUMBERED.match(units[k].text)]
    part_of = {"steps": "item", "block": "code"}
    return {k: s for k in order for s in wholes if units[k].kind == part_of[units[s].kind]
            and units[s].chunk.id == units[k].chunk.id
            and units[s].line_start <= units[k].line_start <= units[k].line_end <= units[s].line_end}


def steps_whole(scored: list[tuple[float, float, int]], steps_of: dict[int, int],
                bonus: float) -> list[tuple[float, float, int]]:
    """For "how do I": a step read alone ("Open **Settings**.", "You're done!") shares the words
    its heading gives every unit and answers nothing; its procedure does. The list takes the
    best score of its steps (a procedure answers as well as its best step, and no unit scores
    higher than before, so the gate reads what it did) and ``bonus`` (the procedure's), and each
    step ranks that much under its list."""
    if not steps_of:
        return scored
    best: dict[int, tuple[float, float]] = {}
    for rank, base, k in scored:
        if k in steps_of:
            r, b = best.get(steps_of[k], (rank, base))
            best[steps_of[k]] = (max(r, rank), max(b, base))
    out = []
    for rank, base, k in scored:
        if k in best:
            rank, base = max(rank, best[k][0] + bonus), max(base, best[k][1])
        elif k in steps_of:
            rank -= bonus
        out.append((rank, base, k))
    return out


MAX_WHOLE_LINES = 8  # a list of more items is quoted by the items chosen
# An item of a list this short is quoted with its list: "Optionally, provide a `digits` parameter
# to round to that number of decimal places." extends the item above it ("Rounds the number to the
# nearest integer.") and is shown by the one below ("`(2.3333).round(2)` returns `2.33`").
# Session 33, quotes only, every set: 7 answers gain recall (4 on the tune halves, 3 on the check
# halves: "I'd like to support Obsidian with money" 0.53 -> 1.00), none loses, about 40 others read
# some 20 words more. Under 220 characters only 3 gain.
MAX_SHORT_ITEMS, MAX_SHORT_CHARS = 3, 320


def is_list(unit: Unit) -> bool:
    """Is the unit a list or a table whole (numbered steps, a list opening its section, a table, or
    a lead-in with the list it opens)?"""
    return unit.kind in ("steps", "table", "list") \
        or unit.kind == "block" and sum(map(is_list_line, unit.text.splitlines())) > 1


def is_procedure(unit: Unit) -> bool:
    """Is the unit numbered steps whole? "Which properties does Obsidian give me" is no call for
    the steps of sending a gift."""
    return unit.kind == "steps" and bool(NUMBERED.match(unit.text))


def whole_lists(chosen: list[tuple[float, Unit]], units: Sequence[Unit],
                every_unit: Sequence[Unit]) -> list[tuple[float, Unit]]:
    """Two items of one short list chosen apart: the list whole in the place of the first, at the
    better score. "Which places are on our list for Lisbon?" quoted Belém and Alfama, not Sintra, the
    list's third line. One item of a list of ``MAX_SHORT_ITEMS`` is its list whole too, found among
    ``every_unit`` (the units before lists whole were set aside for a question that asks no list)."""
    # not a table: two rows chosen are the two asked ("undo" and "redo"), the rest other things
    wholes = [w for w in units if is_list(w) and w.kind != "table" and len(w.text.splitlines()) <= MAX_WHOLE_LINES + 1]

    def whole_of(unit: Unit) -> Unit | None:
        if unit.kind not in ("item", "row"):
            return None
        return next((w for w in wholes if inside(unit, w)), None)

    shorts = [w for w in every_unit if is_list(w) and w.kind != "table"
              and len(w.text.splitlines()) <= MAX_SHORT_ITEMS and len(w.text) <= MAX_SHORT_CHARS]

    def short_of(unit: Unit) -> Unit | None:
        return next((w for w in shorts if inside(unit, w)), None) if unit.kind == "item" else None

    of = [whole_of(u) or short_of(u) for _s, u in chosen]
    out: list[tuple[float, Unit]] = []
    for (score, unit), whole in zip(chosen, of):
        if whole is None or sum(w is whole for w in of) < 2 and all(w is not whole for w in shorts):
            out.append((score, unit))
        elif all(u is not whole for _s, u in out):
            out.append((max(s for (s, _u), w in zip(chosen, of) if w is whole), whole))
    return out
