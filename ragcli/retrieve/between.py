"""The sentence between two quotes of one paragraph: the step of the reasoning they leave out.

A report explains in a run of sentences, each leaning on the one before ("The exception handler
did not get called. In cFE version 6.4.2, this requirement was new. This requirement was being
satisfied in the PSP rather than the cFE. Changes to the PSP (in PSP version 1.3.0) resulted in
the failure of this requirement."). The question's words pick the first, second and fourth;
the third says the link between them in words of its own ("satisfied in the PSP rather than
the cFE") and scores low alone. Shown without it, the quotes read as a chain with a link out.
"""

from __future__ import annotations

from .units import Unit, split_units

MAX_WORDS = 40  # a sentence between longer than this is a paragraph's worth, not a link
_PROSE = ("sentence", "line")


def with_sentences_between(kept: list[tuple[float, Unit]]) -> list[tuple[float, Unit]]:
    """The quotes, and for each two sentences quoted from one chunk with one sentence between
    them, that sentence, at the lower of the two scores (it makes nothing look better answered).
    The sentence must run on from the line the first ends on: one that opens a line of its own
    is a heading run in ("Distributions to victims of domestic abuse." before the paragraph it
    names) or a table's head ("THEN your standard deduction is..."), not a step between."""
    out = list(kept)
    shown = {_plain(u.shown) for _s, u in kept}
    for i, (score_a, a) in enumerate(kept):
        if a.kind not in _PROSE:
            continue
        run = [u for u in split_units(a.hit) if u.kind in _PROSE]
        at = _index(run, a)
        if at is None or at + 2 >= len(run):
            continue
        after, mid = run[at + 2], run[at + 1]
        for score_b, b in kept[i + 1:] + kept[:i]:
            if b.kind in _PROSE and b.chunk.path == a.chunk.path and _plain(b.text) == _plain(after.text):
                if (mid.line_start == a.line_end and len(mid.text.split()) <= MAX_WORDS
                        and not any(_plain(mid.text) in s for s in shown)):
                    out.append((min(score_a, score_b), mid))
                    shown.add(_plain(mid.text))
                break
    return out


def _index(run: list[Unit], unit: Unit) -> int | None:
    text = _plain(unit.text)
    return next((k for k, u in enumerate(run) if _plain(u.text) == text and u.line_start == unit.line_start), None)


def _plain(text: str) -> str:
    return " ".join(text.split())
