"""The sentence between two quotes of one paragraph (issue 19). Text as the PDF reader gives
it: the cFE 6.5.0 build verification report (p. 16), Publication 17 (2024, p. 4)."""

from __future__ import annotations

from ragcli.retrieve.between import with_sentences_between
from ragcli.retrieve.units import split_units
from ragcli.types import Chunk, Hit

CFE = ("The <PLATFORM_DEFINED> exception\n"
       "handler did not get called. In cFE version 6.4.2,\n"
       "this requirement was new. This requirement\n"
       "was being satisfied in the PSP rather than the\n"
       "cFE. Changes to the PSP (in PSP version 1.3.0)\n"
       "resulted in the failure of this requirement. cFE\n"
       "requirements must be satisfied by the cFE.")
PUB17 = ("Beginning in 2024, the IRA contribution limit is increased to $7,000 ($8,000 for individuals age 50\n"
         "or older) from $6,500 ($7,500 for individuals age 50 or older).\n"
         "Distributions to victims of domestic abuse.\n"
         "Beginning with distributions made after December 31, 2023, a distribution to a domestic abuse\n"
         "victim is not subject to the 10% additional tax on early distributions if certain requirements are met.")


def _units(text: str, start: int):
    chunk = Chunk(f"c{start}", "/r/report.pdf", "Report", "Report", text, start, start + text.count("\n"), 16)
    return split_units(Hit(chunk, 1.0, 1))


def _with(text: str, start: int, *openings: str) -> list[str]:
    units = _units(text, start)
    chosen = [(0.8 - 0.1 * i, next(u for u in units if u.text.startswith(o))) for i, o in enumerate(openings)]
    return [u.text for _s, u in with_sentences_between(chosen)]


def test_the_link_between_two_quoted_sentences_is_shown():
    shown = _with(CFE, 46, "In cFE version 6.4.2", "Changes to the PSP")
    assert shown[-1] == "This requirement was being satisfied in the PSP rather than the cFE."
    assert len(shown) == 3


def test_sentences_two_apart_only():
    assert len(_with(CFE, 46, "The <PLATFORM_DEFINED>", "Changes to the PSP")) == 2  # two between: no link
    assert len(_with(CFE, 46, "The <PLATFORM_DEFINED>", "In cFE version 6.4.2")) == 2  # none between


def test_a_heading_run_in_on_a_line_of_its_own_is_no_link():
    """"Distributions to victims of domestic abuse." names the paragraph after it."""
    assert len(_with(PUB17, 4, "Beginning in 2024", "Beginning with distributions")) == 2
