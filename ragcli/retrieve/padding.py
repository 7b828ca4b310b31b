"""Quotes that only pad the answer: chosen for scoring near the best, they add nothing the reader
needs once a quote gives the answer.

The scores of the quotes chosen sit within a fifth of each other, and the one that answers is
often not the best scored, so no floor on the score tells padding from answer. What tells it
is what a quote is (bench/ISSUE19.md, session 7, read against the references of the how-to,
answers and multi-part sets):
- for "how do I ...", a quote that gives no step beside one that does: "Learn how to use the
  iframe HTML element to embed web pages in your notes." beside the block that says how;
- for "how do I ...", a quote of another note when a quote in the section whose heading names
  the question gives the step: the Live Preview note's "By default, editing view is set to
  *Live Preview*" for "show a live website right inside one of my notes";
- for a question of several parts, a quote that holds none of the question's words and was
  not chosen for a part: the bulk ferment's "4 to 6 hours at 24 °C" beside the bake for "what
  temperature and how long is the sourdough baked".
A part's quote always stays. The best scored one stays here too (the "not covered" gate reads
its score and words), and when it only pads, ``best_pads`` says so: the answer lets it go once
the gate has read it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..words import query_terms
from .units import Unit

BLOCK_KINDS = ("block", "code", "steps")
STEP_KINDS = (*BLOCK_KINDS, "row")  # a table row: a shortcut, a setting, a value to type
# A sentence that gives a step: a purpose then the step ("To create a callout, add ..."), the
# means ("... by adding a plus"), an imperative ("Install Obsidian Headless to ..."), or a lead-in.
STEP_SENTENCE = re.compile(r"(?:^|[.!?]\s+)to [a-z]+\b[^.,:;]{0,80},\s*\S|\bby [a-z-]+ing\b", re.I)
_VERBS = (r"(?:install|open|use|add|click|select|press|type|enter|run|set|create|choose|go|drag|copy|paste|tap|"
          r"navigate|enable|disable|turn|right-click|hold|find|start|save|move|rename|delete|insert|change|"
          r"configure|download|restart|switch|toggle|search|write|put|make|check|remove|replace|edit|log|sign|drop)\b")
_IMPERATIVE = re.compile("^" + _VERBS, re.I)
# The step said to the reader: "If you want to edit consecutive lines of text ..., you can hold
# `Shift+Alt` ... while dragging."
_YOU_CAN = re.compile(r"\byou can (?:also |then |now |simply |just |instead )?" + _VERBS, re.I)
# A callout's title run into its text ("Bookmark a heading To bookmark a heading, right-click ..."):
# the capital says a sentence starts there.
_TITLED_STEP = re.compile(r"\sTo [a-z]+\b[^.,:;]{0,80},\s*\S")


def gives_step(unit: Unit) -> bool:
    """Does the unit say what to do: code, a list of steps, a lead-in with its block, a table row,
    or a sentence that gives an instruction?"""
    if unit.kind in STEP_KINDS:
        return True
    text = unit.shown.rstrip()
    # a lead-in ("Tags in YAML should always be formatted as a list:") is given its block later
    return text.endswith(":") or gives_instruction(text)


def gives_instruction(text: str) -> bool:
    """Does a sentence say what to do (a purpose then the step, the means, an imperative)?"""
    text = text.rstrip()
    return bool(STEP_SENTENCE.search(text) or _IMPERATIVE.match(text.lstrip("*_> ")) or _TITLED_STEP.search(text)
                or _YOU_CAN.search(text))


AFTER_CODE_LINES = 3  # a fence and a blank line may stand between code and the sentence on it


def says_what_code_does(unit: Unit, steps: Sequence[Unit]) -> bool:
    """Is the unit the sentence just after a quoted code sample, in its note? It says what the
    code does ("Bisect runs the command at each step and marks the commit good when it exits
    0."), which the code alone does not; a sentence before the code introduces it and pads."""
    return any(s.kind == "code" and s.chunk.path == unit.chunk.path
               and 0 < unit.line_start - s.line_end <= AFTER_CODE_LINES for s in steps)


def without_padding(chosen: list[tuple[float, Unit]], question: str, how: bool, has_parts: bool,
                    for_parts: Sequence[Unit], named: tuple[str, str] | None,
                    keep_best: bool = True) -> list[tuple[float, Unit]]:
    """``chosen`` less the quotes that only pad it (module docstring). ``how``: the question asks
    how to do something; ``for_parts``: the units chosen for the question's parts; ``named``: the
    (title, heading) of the section whose heading comes closest to the question; ``keep_best``:
    the best scored stays whatever it is."""
    if len(chosen) < 2:
        return chosen
    best = max(chosen, key=lambda c: c[0])[1]
    for_parts_ids = {id(u) for u in for_parts}
    steps = {id(u) for _s, u in chosen if gives_step(u)}
    step_units = [u for _s, u in chosen if id(u) in steps]
    named_steps = [u for _s, u in chosen
                   if id(u) in steps and named is not None and (u.chunk.title, u.chunk.heading) == named]
    named_notes = {u.chunk.path for u in named_steps}
    # the named section's step is a sentence ("Click a footnote to edit its text." under Footnotes
    # view): another note's code or list that shows how (the footnote syntax) still answers
    named_blocks = any(u.kind in BLOCK_KINDS for u in named_steps)
    asked = query_terms(question)

    def pads(unit: Unit) -> bool:
        if id(unit) in for_parts_ids or (unit is best and keep_best):
            return False  # the best stays: the "not covered" gate reads its score
        if how and named_notes and unit.chunk.path not in named_notes:
            return named_blocks or unit.kind not in BLOCK_KINDS
        if how and id(unit) not in steps and steps - {id(unit)} and not says_what_code_does(unit, step_units):
            return True
        return has_parts and not query_terms(unit.shown) & asked

    return [c for c in chosen if not pads(c[1])]


def best_pads(chosen: list[tuple[float, Unit]], question: str, how: bool, has_parts: bool,
              for_parts: Sequence[Unit], named: tuple[str, str] | None) -> Unit | None:
    """The best scored of ``chosen`` when it only pads the others (by the same rules), else None:
    "Use callouts to include additional content without breaking the flow of your notes" beside
    "To create a callout, add `[!info]` ...". It is kept for the gate, and let go after it."""
    if len(chosen) < 2:
        return None
    best = max(chosen, key=lambda c: c[0])[1]
    lean = without_padding(chosen, question, how, has_parts, for_parts, named, keep_best=False)
    return best if lean and all(u is not best for _s, u in lean) else None
