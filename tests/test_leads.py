"""A quote from further down a note's section is shown with the section's opening sentence when
that sentence states a purpose or a condition and then what to do ("To create a task list, start
each list item with ..."), and only then (us-03 in bench/questions/users.jsonl)."""

from __future__ import annotations

from ragcli.retrieve.leads import with_section_leads
from ragcli.types import Chunk, Quote

TASKS = ("### Task lists\n\n"
         "To create a task list, start each list item with a hyphen and space followed by `[ ]`.\n\n"
         "```md\n- [ ] This is an incomplete task.\n```\n\n"
         "You can toggle a task in Reading view by selecting the checkbox.\n")
TOGGLE = "You can toggle a task in Reading view by selecting the checkbox."
HEADING = "Basic formatting syntax > Lists > Task lists"
QUESTION = "can I make a to-do list with checkboxes in a note?"


def _section(text: str = TASKS, start: int = 280) -> list[Chunk]:
    return [Chunk("c1", "/v/Basic.md", "Basic formatting syntax", HEADING, text, start, start + text.count("\n"))]


def _quote(text: str = TOGGLE, line: int = 288, n: int = 1) -> Quote:
    return Quote(n, text, "line", "/v/Basic.md", "Basic formatting syntax", HEADING, line, line, None, 0.55)


def _leads(quotes: list[Quote], text: str = TASKS, question: str = QUESTION) -> list[Quote]:
    return with_section_leads(quotes, question, lambda path, heading: _section(text))


def test_the_sections_opening_instruction_comes_before_a_quote_from_further_down():
    other = Quote(2, "Other note's line.", "line", "/v/Other.md", "Other", "Other", 3, 3, None, 0.5)
    quotes = _leads([_quote(), other])
    assert [q.text for q in quotes] == [
        "To create a task list, start each list item with a hyphen and space followed by `[ ]`.", TOGGLE,
        "Other note's line."]
    assert (quotes[0].line_start, quotes[0].line_end, quotes[0].kind) == (282, 282, "sentence")
    assert [q.n for q in quotes] == [1, 2, 3]


def test_no_opening_is_added_that_is_shown_already_or_is_no_instruction():
    # the quote is the opening itself
    opening = _quote("To create a task list, start each list item with a hyphen and space followed by `[ ]`.", 282)
    assert _leads([opening]) == [opening]
    # an opening that says what a thing is, not what to do
    defines = TASKS.replace("To create a task list, start", "A task list is a list whose items start")
    assert _leads([_quote()], defines) == [_quote()]
    # a lead-in, whose block another rule adds
    lead_in = TASKS.replace("followed by `[ ]`.", "followed by brackets:")
    assert _leads([_quote()], lead_in) == [_quote()]
    # an opening that shares no word with the question
    assert _leads([_quote()], question="How do I toggle it in Reading view?") == [_quote()]
    # a section that opens with code or a list has no opening sentence
    listed = TASKS.replace("To create a task list, start each list item with a hyphen and space followed by `[ ]`.",
                           "- To create a task list, start each item with `[ ]`.")
    assert _leads([_quote()], listed) == [_quote()]
    # a PDF page's quote is left as it is
    page = Quote(1, TOGGLE, "line", "/v/Basic.pdf", "Basic", HEADING, 8, 8, 4, 0.55)
    assert with_section_leads([page], QUESTION, lambda path, heading: []) == [page]
