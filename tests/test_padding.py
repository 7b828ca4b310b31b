"""Quotes that only pad an answer are let go (issue 19, "fewer words to read"): beside a quote
that gives the step, one that only describes; another note's quote when the section whose
heading names the question gives the step; for a question of several parts, an extra quote
holding none of the question's words. Units cut from real Markdown by the real splitter; the
last test scores them with the real embedding model.
"""

from __future__ import annotations


from ragcli.retrieve.evidence import select_quotes, split_units
from ragcli.retrieve.padding import best_pads, gives_step, without_padding
from ragcli.types import Chunk, Hit

EMBED = ("---\n# Embed web pages\n"
         "Learn how to use the iframe HTML element to embed web pages in your notes.\n\n"
         "To embed a web page, add the following in your note and replace the placeholder text with the URL:\n\n"
         "```md\n<iframe src=\"INSERT YOUR URL HERE\"></iframe>\n```\n")
VIEWS = ("Note By default, editing view is set to *Live Preview*. You can change this under "
         "**Settings → Editor → Default editing mode**.\n")


def _units(path: str, title: str, heading: str, text: str, rank: int = 1):
    return split_units(Hit(Chunk(f"{path}#{rank}", path, title, heading, text, 1, text.count("\n") + 1), 1.0, rank))


def _unit(units, start: str):
    return next(u for u in units if u.text.startswith(start))


def test_what_gives_a_step():
    units = _units("/v/Embed web pages.md", "Embed web pages", "Embed web pages", EMBED)
    assert gives_step(_unit(units, "To embed a web page"))  # a lead-in with its code
    assert not gives_step(_unit(units, "Learn how to use"))
    sentences = _units("/v/Tags.md", "Tags", "Tags",
                       "Install the plugin from the store.\n\nTags help you find notes.\n\n"
                       "To create a tag, enter a hash symbol.\n\nTags in YAML should always be formatted as a list:\n")
    assert [gives_step(u) for u in sentences] == [True, False, True, True]


def test_a_step_said_to_the_reader_as_you_can_is_a_step():
    """"If you want to edit consecutive lines ..., you can hold `Shift+Alt` ... while dragging." says
    what to do; beside "To remove a selection ..., click anywhere" it was let go as padding, and the
    answer to "put my cursor on ten lines at once, like a column" lost its keys (users2 u2-05)."""
    units = _units("/v/Multiple cursors.md", "Multiple cursors", "Multiple cursors > Rectangular selection",
                   "If you want to edit consecutive lines of text, you can hold `Shift+Alt` while dragging.\n\n"
                   "You can also hold the middle mouse button while dragging.\n\n"
                   "You can only have one rectangular selection at a time.\n")
    assert [gives_step(u) for u in units] == [True, True, False]


def test_beside_a_step_a_description_only_pads_a_how_to_answer():
    units = _units("/v/Embed web pages.md", "Embed web pages", "Embed web pages", EMBED)
    learn, step = _unit(units, "Learn how to use"), _unit(units, "To embed a web page")
    question = "How do I show a live website right inside one of my notes?"
    # the best scored stays whatever it is: the "not covered" gate reads its score
    both = [(0.44, learn), (0.43, step)]
    assert without_padding(both, question, True, False, [], None) == both
    assert without_padding([(0.44, step), (0.43, learn)], question, True, False, [], None) == [(0.44, step)]
    # a question that asks no "how" keeps both
    assert len(without_padding([(0.44, step), (0.43, learn)], "What is an iframe?", False, False, [], None)) == 2


def test_the_best_quote_that_only_pads_is_named_for_the_answer_to_let_go():
    """The gate reads the best quote's score, so evidence keeps it; ``best_pads`` names it when it
    only describes beside a step, and the answer lets it go once the gate has read it."""
    units = _units("/v/Embed web pages.md", "Embed web pages", "Embed web pages", EMBED)
    learn, step = _unit(units, "Learn how to use"), _unit(units, "To embed a web page")
    question = "How do I show a live website right inside one of my notes?"
    assert best_pads([(0.44, learn), (0.43, step)], question, True, False, [], None) is learn
    assert best_pads([(0.44, step), (0.43, learn)], question, True, False, [], None) is None
    assert best_pads([(0.44, learn), (0.43, step)], "What is an iframe?", False, False, [], None) is None
    assert best_pads([(0.44, learn)], question, True, False, [], None) is None  # nothing else to show


def test_another_notes_quote_pads_when_the_named_section_gives_the_step():
    embed = _units("/v/Embed web pages.md", "Embed web pages", "Embed web pages", EMBED)
    views = _units("/v/Views.md", "Views", "Views > Editing view > Live Preview",
                   "To switch to *Live Preview*, press `Ctrl+E`.\n", rank=2)
    step, note = _unit(embed, "To embed a web page"), views[0]  # two steps: neither only describes
    chosen = [(0.45, step), (0.44, note)]
    question = "How do I show a live website right inside one of my notes?"
    assert without_padding(chosen, question, True, False, [], ("Embed web pages", "Embed web pages")) == [(0.45, step)]
    # no section named, or the named one gives no step: nothing to lean on, both stay
    assert without_padding(chosen, question, True, False, [], None) == chosen
    views_named = ("Views", "Views > Editing view > Live Preview")
    assert without_padding(chosen, question, True, False, [], views_named) == chosen


def test_another_notes_code_stays_when_the_named_section_gives_only_a_sentence():
    """"how do I add a footnote": the Footnotes view note's heading is closest and its step is a
    sentence; the syntax, code under another note's heading, is the answer and stays."""
    view = _units("/v/Footnotes view.md", "Footnotes view", "Footnotes view",
                  "Click a footnote to edit its text.\n")[0]
    syntax = _units("/v/Basic formatting syntax.md", "Basic formatting syntax", "Basic formatting syntax > Footnotes",
                    "```md\nThis is a simple footnote[^1].\n\n[^1]: This is the referenced text.\n```\n", rank=2)[0]
    other = _units("/v/Templates.md", "Templates", "Templates > Behavior",
                   "Add the template to an existing note, at the top or bottom.\n", rank=3)[0]
    assert syntax.kind == "code" and gives_step(other)
    chosen = [(0.62, view), (0.60, syntax), (0.58, other)]
    question = "how do I add a footnote at the bottom of my note?"
    named = ("Footnotes view", "Footnotes view")
    assert without_padding(chosen, question, True, False, [], named) == chosen[:2]


def test_an_extra_quote_of_a_question_in_parts_holds_one_of_its_words():
    text = ("- Bake in a Dutch oven at 250 °C: 20 minutes lid on, 25 minutes lid off.\n"
            "- Bulk ferment until the dough has grown by half, 4 to 6 hours at 24 °C.\n")
    units = _units("/v/Sourdough.md", "Sourdough", "Sourdough > Method", text)
    bake, bulk = _unit(units, "Bake in"), _unit(units, "Bulk ferment")
    question = "What temperature and how long is the sourdough baked with the lid on and with it off?"
    assert without_padding([(0.59, bake), (0.48, bulk)], question, False, True, [bake], None) == [(0.59, bake)]
    # chosen for a part, it stays
    assert len(without_padding([(0.59, bake), (0.48, bulk)], question, False, True, [bake, bulk], None)) == 2


def test_the_live_preview_note_is_not_quoted_for_a_live_website(searcher):
    """The issue's example: the third quote "Note By default, editing view is set to Live
    Preview" shares "live" with the question and adds nothing to the iframe that answers it."""
    embed = Chunk("e", "/v/Embed web pages.md", "Embed web pages", "Embed web pages", EMBED, 1, 8)
    views = Chunk("v", "/v/Views and editing mode.md", "Views and editing mode",
                  "Views and editing mode > Editing view > Live Preview", VIEWS, 57, 58)
    hits = [Hit(embed, 0.68, 1), Hit(views, 0.34, 2)]

    def idf(terms: list[str]) -> dict[str, float]:
        return dict(zip(terms, searcher.index.keyword_idf([f'"{t}"' for t in terms])))
    quotes = select_quotes("How do I show a live website right inside one of my notes?", hits,
                           searcher.embed_passages, idf)
    assert any("<iframe" in q.text for q in quotes)
    assert not any("Live Preview" in q.text for q in quotes)


def test_the_sentence_after_a_code_sample_says_what_it_does_and_stays():
    """Beside the bisect commands, "Bisect runs the command at each step ..." (after the code) says
    what they do; an introduction before the code pads. A callout's title run into its text
    ("Bookmark a heading To bookmark a heading, right-click ...") still gives the step."""
    text = ("Git can find the bad commit.\n\n```sh\ngit bisect start\ngit bisect run pytest -x\n```\n\n"
            "Bisect runs the command at each step and marks the commit good when it exits 0.\n")
    units = _units("/v/Git.md", "Git", "Git > Find which commit broke a test", text)
    code = next(u for u in units if u.kind == "code")
    intro, after = _unit(units, "Git can find"), _unit(units, "Bisect runs")
    question = "How can I find which commit broke a test?"
    assert without_padding([(0.50, code), (0.45, after), (0.44, intro)], question, True, False, [], None) == [
        (0.50, code), (0.45, after)]
    assert best_pads([(0.50, after), (0.45, code)], question, True, False, [], None) is None
    titled = _units("/v/Bookmarks.md", "Bookmarks", "Bookmarks",
                    "Bookmark a heading To bookmark a heading, right-click the heading and select **Bookmark**.\n")
    assert gives_step(titled[0])


def test_the_best_quote_is_let_go_after_the_gate_unless_weak_and_alone_in_its_note():
    from ragcli.pipeline.answer import without_padding_best
    from ragcli.retrieve.evidence import Evidence, quote_place
    from ragcli.types import Quote

    learn = Quote(1, "Backlinks list the notes that link to this one.", "line", "/v/Backlinks.md", "Backlinks",
                  "Backlinks", 22, 22, None, 0.48)
    step = Quote(2, "To preview a page, press Ctrl while hovering.", "line", "/v/Page preview.md", "Page preview",
                 "Page preview", 6, 6, None, 0.47)
    evidence = Evidence([learn, step], [], [], [], [], quote_place(learn))
    assert [q.text for q in without_padding_best([learn, step], evidence, False)] == [step.text]
    assert without_padding_best([learn, step], evidence, False)[0].n == 1  # renumbered
    # weak evidence: the best passage's note is the likeliest meant, and no other quote is of it
    assert without_padding_best([learn, step], evidence, True) == [learn, step]
    same_note = Quote(2, "To show backlinks, open the Command palette.", "line", "/v/Backlinks.md", "Backlinks",
                      "Backlinks", 63, 63, None, 0.47)
    assert [q.text for q in without_padding_best([learn, same_note], evidence, True)] == [same_note.text]
