"""A lead-in's block is shown with the sentence before the lead-in when both open their paragraph
on one line of the note (ht-33: "Tags can't contain blank spaces." before "To separate two or
more words, ...:" and its list), and never from a chunk cut mid-paragraph."""

from __future__ import annotations

from dataclasses import replace

from ragcli.retrieve.rule_before import with_rule_before
from ragcli.types import Chunk, Quote

TAGS = ("## Tag format\n\nYou can use letters.\n\n"
        "Tags can't contain blank spaces. To separate two or more words, you can instead use the following formats:\n\n"
        "- #camelCase\n- #kebab-case\n")
LEAD = "To separate two or more words, you can instead use the following formats:"


def _section(text: str, start: int = 50) -> list[Chunk]:
    return [Chunk("c1", "/v/Tags.md", "Tags", "Tags > Tag format", text, start, start + text.count("\n"))]


def _lead_quote(line: int, lead: str = LEAD) -> Quote:
    return Quote(1, f"{lead}\n- #camelCase\n- #kebab-case", "block", "/v/Tags.md", "Tags", "Tags > Tag format",
                 line, line + 3, None, 0.6)


def test_the_rule_before_a_lead_in_on_its_line_is_shown_with_it():
    quotes = with_rule_before([_lead_quote(54)], lambda path, heading: _section(TAGS))
    assert quotes[0].text.startswith(f"Tags can't contain blank spaces. {LEAD}\n- #camelCase")
    assert quotes[0].line_start == 54 and quotes[0].kind == "block"


def test_no_sentence_is_taken_from_another_line_or_a_cut_chunk():
    # the paragraph began on the line above: what stands before the lead-in on its line is no opening
    wrapped = TAGS.replace("blank spaces. To", "blank\nspaces. To")
    quote = _lead_quote(55)
    assert with_rule_before([quote], lambda path, heading: _section(wrapped)) == [quote]
    # a chunk that starts mid-paragraph: its first line has no line above to say the paragraph opens there
    cut = "indent** or **Fold heading**, depending on your needs. " + LEAD + "\n\n- #camelCase\n- #kebab-case\n"
    quote = _lead_quote(54)
    assert with_rule_before([quote], lambda path, heading: _section(cut, start=54)) == [quote]
    # a lead-in alone on its line is left as it is
    alone = TAGS.replace("Tags can't contain blank spaces. ", "")
    assert with_rule_before([quote], lambda path, heading: _section(alone)) == [quote]


CALLOUTS = ("## Foldable callouts\n\n"
            "You can make a callout foldable by adding a plus (`+`) or a minus (`-`) "
            "directly after the type identifier.\n\n"
            "A plus sign expands the callout by default, and a minus sign collapses it instead.\n\n"
            "```markdown\n> [!faq]- Are callouts foldable?\n```\n")
FOLDABLE = ("You can make a callout foldable by adding a plus (`+`) or a minus (`-`) "
            "directly after the type identifier.")


def _callouts(text: str = CALLOUTS) -> list[Chunk]:
    return [Chunk("c2", "/v/Callouts.md", "Callouts", "Callouts > Foldable callouts", text, 53, 53 + text.count("\n"))]


def test_a_how_to_step_is_shown_with_the_sentence_that_goes_on_about_it():
    from ragcli.retrieve.beside import with_sentence_after

    step = Quote(1, FOLDABLE, "line", "/v/Callouts.md", "Callouts", "Callouts > Foldable callouts",
                 55, 55, None, 0.6)
    shown = with_sentence_after([step], "How do I make a callout foldable?", lambda path, heading: _callouts())[0]
    assert shown.text == FOLDABLE + (
        " A plus sign expands the callout by default, and a minus sign collapses it instead.")
    assert (shown.line_start, shown.line_end) == (55, 57)
    # not for a question that asks no "how", nor when the next paragraph does not go on about the step
    assert with_sentence_after([step], "Can callouts be folded?", lambda path, heading: _callouts()) == [step]
    other = CALLOUTS.replace("A plus sign expands the callout by default, and a minus sign collapses it instead.",
                             "The Canvas plugin is documented elsewhere.")
    how = "How do I make a callout foldable?"
    assert with_sentence_after([step], how, lambda path, heading: _callouts(other)) == [step]
    # nor when another quote says that sentence already (it leads into the block quoted beside)
    goes_on = "A plus sign expands the callout by default, and a minus sign collapses it instead."
    lead = Quote(2, f"{goes_on}\n> [!faq]- Are callouts foldable?", "block", "/v/Callouts.md", "Callouts",
                 "Callouts > Foldable callouts", 57, 60, None, 0.6)
    assert with_sentence_after([step, lead], how, lambda path, heading: _callouts()) == [step, lead]


EMBEDS = ("## Embed a note in another note\n\nTo embed a note:\n\n```md\n![[Internal links]]\n```\n\n"
          "You can also embed specific headings and blocks.\n\n```md\n![[Internal links#^b15695]]\n```\n")


def _code_quote(line: int, text: str = "![[Internal links#^b15695]]") -> Quote:
    return Quote(2, text, "code", "/v/Embed files.md", "Embed files", "Embed files > Embed a note in another note",
                 line, line, None, 0.6)


def test_code_is_shown_with_the_one_line_paragraph_above_it():
    from ragcli.retrieve.rule_before import with_line_above

    section = [Chunk("c3", "/v/Embed files.md", "Embed files", "Embed files > Embed a note in another note",
                     EMBEDS, 18, 18 + EMBEDS.count("\n"))]
    shown = with_line_above([_code_quote(29)], lambda path, heading: section)[0]
    assert shown.text == "You can also embed specific headings and blocks.\n![[Internal links#^b15695]]"
    assert (shown.kind, shown.line_start, shown.line_end) == ("block", 26, 29)
    # the sentence quoted already is not said twice
    said = Quote(1, "You can also embed specific headings and blocks.", "sentence", "/v/Embed files.md", "Embed files",
                 "Embed files > Embed a note in another note", 26, 26, None, 0.7)
    assert with_line_above([said, _code_quote(29)], lambda path, heading: section)[1] == _code_quote(29)
    # a paragraph of two lines, or code quoted from a line inside its block, is left as it was
    longer = EMBEDS.replace("You can also", "Headings work too.\nYou can also")
    two_lines = [Chunk("c3", "/v/Embed files.md", "Embed files", "Embed files > Embed a note in another note",
                       longer, 18, 18 + longer.count("\n"))]
    assert with_line_above([_code_quote(30)], lambda path, heading: two_lines) == [_code_quote(30)]
    deeper = EMBEDS.replace("![[Internal links#^b15695]]", "![[Internal links#^b15695]]\n![[Internal links#Heading]]")
    inside = [Chunk("c3", "/v/Embed files.md", "Embed files", "Embed files > Embed a note in another note",
                    deeper, 18, 18 + deeper.count("\n"))]
    second = _code_quote(30, "![[Internal links#Heading]]")
    assert with_line_above([second], lambda path, heading: inside) == [second]


TABS = ("## Switch to a different tab\n\nSelect a tab to switch to it. Or, use a keyboard shortcut:\n\n"
        "| Switch To | MacOS | Windows/Linux |\n|---|---|---|\n| **Next tab** | `⌃`+`⇥` | `Ctrl`+`Tab` |\n"
        "| **Last tab on the right** | `⌘`+`9` | `Ctrl`+`9` |")
CUT = ("| **Last tab on the right** | `⌘`+`9` | `Ctrl`+`9` |\n"
       "| **Recently closed tab** | `⌘`+`⇧`+`t` | `Ctrl`+`Shift`+`t` |")


def _tabs(first: str = TABS) -> list[Chunk]:
    heading = "Tabs > Switch to a different tab"
    return [Chunk("t1", "/v/Tabs.md", "Tabs", heading, first, 88, 88 + first.count("\n")),
            Chunk("t2", "/v/Tabs.md", "Tabs", heading, CUT, 95, 95 + CUT.count("\n"))]


def test_a_row_cut_from_its_header_is_read_with_it():
    from ragcli.retrieve.rule_before import with_row_headers

    row = Quote(2, "**Recently closed tab** | `⌘`+`⇧`+`t` | `Ctrl`+`Shift`+`t`", "row", "/v/Tabs.md", "Tabs",
                "Tabs > Switch to a different tab", 96, 96, None, 0.6)
    named = with_row_headers([row], lambda path, heading: _tabs())[0]
    assert named.text == "Switch To: **Recently closed tab**; MacOS: `⌘`+`⇧`+`t`; Windows/Linux: `Ctrl`+`Shift`+`t`"
    assert named.context == "Switch To | MacOS | Windows/Linux" and named.line_start == 96
    # no rule line above the rows (a list of pipes, not a table), or a header of other width: as it was
    no_rule = TABS.replace("|---|---|---|\n", "")
    assert with_row_headers([row], lambda path, heading: _tabs(no_rule)) == [row]
    narrow = TABS.replace("| Switch To | MacOS | Windows/Linux |", "| Switch To | Keys |")
    assert with_row_headers([row], lambda path, heading: _tabs(narrow)) == [row]


NESTED = ("## Nested tags\n\n"
          "Nested tags define tag hierarchies that make it easier to find and filter related tags.\n\n"
          "Create nested tags by using forward slashes (`/`) in the tag name, for example `#inbox/to-read`.\n")
DEFINES = "Nested tags define tag hierarchies that make it easier to find and filter related tags."
STEP = "Create nested tags by using forward slashes (`/`) in the tag name, for example `#inbox/to-read`."


def test_for_how_a_sentence_saying_what_a_thing_is_gets_the_step_after_it():
    from ragcli.retrieve.beside import with_sentence_after

    section = [Chunk("n1", "/v/Tags.md", "Tags", "Tags > Nested tags", NESTED, 30, 30 + NESTED.count("\n"))]
    said = Quote(1, DEFINES, "sentence", "/v/Tags.md", "Tags", "Tags > Nested tags", 32, 32, None, 0.6)
    how = "How do I make a tag that sits under another tag?"
    shown = with_sentence_after([said], how, lambda path, heading: section)[0]
    assert shown.text == f"{DEFINES} {STEP}" and (shown.line_start, shown.line_end) == (32, 34)
    # not for a question that asks no "how", and not when the step is quoted already
    assert with_sentence_after([said], "What are nested tags?", lambda path, heading: section) == [said]
    step = Quote(2, STEP, "sentence", "/v/Tags.md", "Tags", "Tags > Nested tags", 34, 34, None, 0.5)
    assert with_sentence_after([said, step], how, lambda path, heading: section) == [said, step]


PLATFORMS = ("Another way to navigate is the graph.\n\n"
             "**Desktop**\n1. Click **More options**.\n2. Select **Open local graph**.\n\n"
             "**Mobile**\n1. Select **More options**.\n2. Select **Open local graph**.\n")


def test_a_numbered_list_is_shown_with_the_bold_label_just_above_it():
    from ragcli.retrieve.rule_before import with_line_above

    section = [Chunk("p1", "/v/Link notes.md", "Link notes", "Link notes > Navigate", PLATFORMS, 40,
                     40 + PLATFORMS.count("\n"))]

    def steps(first: int) -> Quote:
        body = "1. Click **More options**.\n2. Select **Open local graph**." if first == 43 else \
            "1. Select **More options**.\n2. Select **Open local graph**."
        return Quote(1, body, "steps", "/v/Link notes.md", "Link notes", "Link notes > Navigate", first, first + 1,
                     None, 0.6)

    desktop, mobile = with_line_above([steps(43), steps(47)], lambda path, heading: section)
    assert desktop.text.startswith("**Desktop**\n1. Click") and (desktop.kind, desktop.line_start) == ("block", 42)
    assert mobile.text.startswith("**Mobile**\n1. Select") and mobile.line_start == 46
    # a line of prose run on above the list is no label
    prose = PLATFORMS.replace("**Desktop**", "Click through it")
    section[0] = Chunk("p1", "/v/Link notes.md", "Link notes", "Link notes > Navigate", prose, 40,
                       40 + prose.count("\n"))
    assert with_line_above([steps(43)], lambda path, heading: section) == [steps(43)]


CLOUDFLARE = ("**CloudFlare:**\n\n1. Open Cloudflare to the domain.\n2. Go to **DNS** and click **Add Record**.\n"
              "3. Select **CNAME**.\n4. Go to **SSL/TLS** and set the mode to \"Full\".\n\nThen wait.\n")


def _cloudflare() -> list[Chunk]:
    """The list cut by the chunker after its first step: the section's two chunks."""
    lines = CLOUDFLARE.split("\n")
    heading = "Custom domains > Set up using CloudFlare"
    return [Chunk("d1", "/v/Custom domains.md", "Custom domains", heading, "\n".join(lines[:3]), 28, 30),
            Chunk("d2", "/v/Custom domains.md", "Custom domains", heading, "\n".join(lines[3:]), 31, 36)]


def test_for_how_a_step_of_a_list_the_chunker_cut_is_read_with_the_whole_list_and_its_label():
    from ragcli.retrieve.rule_before import with_line_above, with_whole_procedure

    step = Quote(1, "Open Cloudflare to the domain.", "item", "/v/Custom domains.md", "Custom domains",
                 "Custom domains > Set up using CloudFlare", 30, 30, None, 0.6)
    how = "How do I set up a custom domain with Cloudflare?"
    whole = with_whole_procedure([step], how, lambda path, heading: _cloudflare())[0]
    assert (whole.kind, whole.line_start, whole.line_end) == ("steps", 30, 33)
    assert whole.text.startswith("1. Open Cloudflare") and whole.text.endswith('set the mode to "Full".')
    # its bold label, a blank line above it, is shown with it
    labelled = with_line_above([whole], lambda path, heading: _cloudflare())[0]
    assert labelled.text.startswith("**CloudFlare:**\n1. Open Cloudflare") and labelled.line_start == 28
    # not for a question that asks no "how", nor for a quote that holds the whole list already
    assert with_whole_procedure([step], "Is Cloudflare supported?", lambda path, heading: _cloudflare()) == [step]
    assert with_whole_procedure([whole], how, lambda path, heading: _cloudflare()) == [whole]


CAPABILITIES = ("Due to technical limitations, Obsidian cannot reliably restrict plugins to specific permissions or "
                "access levels. This means that plugins will inherit Obsidian's access levels. As a result, consider "
                "the following examples of what community plugins can do:\n\n"
                "- Community plugins can access files on your computer.\n"
                "- Community plugins can connect to internet.\n")
FOLLOWING = "As a result, consider the following examples of what community plugins can do:"


def test_a_lead_in_that_follows_on_takes_its_paragraphs_opening_from_the_sections_first_line():
    """The section's first chunk starts on the paragraph's first line (its heading is not text), and
    a lead-in opening on what was just said ("As a result, ...") takes a longer opening along."""
    heading = "Plugin security > Plugin capabilities"
    section = [Chunk("s0", "/v/Plugin security.md", "Plugin security", "Plugin security", "Intro.", 4, 4),
               Chunk("s1", "/v/Plugin security.md", "Plugin security", heading, CAPABILITIES, 26,
                     26 + CAPABILITIES.count("\n"))]
    quote = Quote(1, f"{FOLLOWING}\n- Community plugins can access files on your computer.", "block",
                  "/v/Plugin security.md", "Plugin security", heading, 26, 28, None, 0.6)
    shown = with_rule_before([quote], lambda path, heading: section)[0]
    assert shown.text.startswith("Due to technical limitations, Obsidian cannot reliably restrict plugins")
    assert f"inherit Obsidian's access levels. {FOLLOWING}\n- Community" in shown.text
    # a lead-in that does not follow on keeps the shorter bound: the same opening is too long for it
    plain = quote.text.replace("As a result, consider", "Consider")
    other = CAPABILITIES.replace("As a result, consider", "Consider")
    section[1] = Chunk("s1", "/v/Plugin security.md", "Plugin security", heading, other, 26, 26 + other.count("\n"))
    unchanged = replace(quote, text=plain)
    assert with_rule_before([unchanged], lambda path, heading: section) == [unchanged]


def test_a_quote_opening_with_a_callouts_title_reads_it_as_a_label(tmp_path):
    """The parse drops `[!note]` and the title's line runs into the text under it ("Note If you
    can't see ..."); at display time the note's own line says where the title ended."""
    from ragcli.ingest.obsidian import rewrite_callouts
    from ragcli.retrieve.rule_before import with_callout_titles

    note = tmp_path / "Backlinks.md"
    raw = ("# Backlinks\n\n> [!note] Note\n> If you can't see the tab, run the command.\n\n"
           "> [!faq]- Are they foldable?\n> Yes! They are.\n\n> [!tip]\n> Pin the tab.\n")
    note.write_text(raw, encoding="utf-8")
    indexed = rewrite_callouts(raw)  # the section's text as the index holds it
    section = [Chunk("b1", str(note), "Backlinks", "Backlinks", indexed, 1, 1 + indexed.count("\n"))]

    def quote(text: str, line: int, path=note) -> Quote:
        return Quote(1, text, "sentence", str(path), "Backlinks", "Backlinks", line, line + 1, None, 0.6)

    def labelled(quotes):
        return with_callout_titles(quotes, lambda path, heading: section)

    titled, asked, bare = labelled([quote("Note If you can't see the tab, run the command.", 3),
                                    quote("Are they foldable? Yes! They are.", 6),
                                    quote("Tip Pin the tab.", 9)])
    assert titled.text == "Note: If you can't see the tab, run the command."
    assert asked.text == "Are they foldable? Yes! They are."  # a title that ends its sentence already
    assert bare.text == "Tip: Pin the tab."  # no title: the parse shows the type's name
    # a note edited since it was indexed (the line is no callout now), or gone, leaves the quote as it was
    moved = quote("Note If you can't see the tab, run the command.", 4)
    gone = quote("Note If you can't see the tab, run the command.", 3, tmp_path / "Gone.md")
    assert labelled([moved, gone]) == [moved, gone]


HTML = ("## No Markdown inside HTML\n\n"
        "Obsidian does not render Markdown syntax inside HTML elements.\n\n"
        "For example, this will not work as expected:\n\n"
        "```md\n<div>\nThis **will not** be bold.\n</div>\n```\n")
EXAMPLE = "For example, this will not work as expected:"


def _html(text: str = HTML) -> list[Chunk]:
    return [Chunk("c3", "/v/HTML.md", "HTML", "HTML > No Markdown inside HTML", text, 50, 50 + text.count("\n"))]


def _example_quote() -> Quote:
    return Quote(1, f"{EXAMPLE}\n<div>\nThis **will not** be bold.\n</div>", "block", "/v/HTML.md", "HTML",
                 "HTML > No Markdown inside HTML", 54, 60, None, 0.6)


def test_an_example_is_shown_with_the_point_it_illustrates():
    """u4-07: "I wrapped a paragraph in a <div> ... the **bold** inside just shows the asterisks" was
    shown the example and not why: the one-line paragraph above "For example, ...:" is its point."""
    quotes = with_rule_before([_example_quote()], lambda path, heading: _html())
    assert quotes[0].text.startswith(f"Obsidian does not render Markdown syntax inside HTML elements. {EXAMPLE}\n<div>")
    assert quotes[0].line_start == 52
    # a point of two lines, or a lead-in that is no example, is left as it is
    two_lines = HTML.replace("inside HTML elements.", "inside\nHTML elements.")
    quote = replace(_example_quote(), line_start=55, line_end=61)
    assert with_rule_before([quote], lambda path, heading: _html(two_lines)) == [quote]
    plain = _example_quote()
    plain = replace(plain, text=plain.text.replace("For example, this", "This"))
    assert with_rule_before([plain], lambda path, heading: _html(HTML.replace("For example, this", "This"))) == [plain]


REPORT = ("They volunteered to be interviewed.\n"
          "OPM's Retirement Office experienced substantial staffing challenges in FY 2016. In addition, the\n"
          "overflow call services contract ended in July 2016, resulting in a loss of approximately 20 trained\n"
          "contract staff. To address these challenges, OPM hired 38 Customer Service Specialists.")


def test_a_sentence_that_adds_to_a_quote_comes_with_it():
    """"In addition, ..." goes on with the quote's point: asked why the office struggled, the
    reader needs the lost contract staff too. The sentence runs over the report's wrapped lines;
    a sentence that does not add ("To address these challenges, ...") is not taken."""
    from ragcli.retrieve.beside import with_addition_after

    chunks = [Chunk("r", "/r/opm.pdf", "OPM", "OPM", REPORT, 69, 72, page=91)]
    said = "OPM's Retirement Office experienced substantial staffing challenges in FY 2016."
    quote = Quote(1, said, "sentence", "/r/opm.pdf", "OPM", "OPM", 70, 70, 91, 0.5)
    shown = with_addition_after([quote], lambda path, heading: chunks)[0]
    assert shown.text.endswith("resulting in a loss of approximately 20 trained contract staff.")
    assert (shown.line_start, shown.line_end) == (70, 72)
    last = Quote(1, "To address these challenges, OPM hired 38 Customer Service Specialists.", "sentence",
                 "/r/opm.pdf", "OPM", "OPM", 72, 72, 91, 0.5)
    assert with_addition_after([last], lambda path, heading: chunks) == [last]
    # shown already by another quote: not twice
    other = replace(quote, n=2, text="In addition, the overflow call services contract ended in July 2016, "
                    "resulting in a loss of approximately 20 trained contract staff.", line_start=70, line_end=72)
    assert with_addition_after([quote, other], lambda path, heading: chunks)[0] == quote


def test_the_answer_after_a_notes_question_is_read_whole_where_it_wraps():
    """The answer after a FAQ's question runs over the next line of its paragraph: it is read to
    its end, not cut at the line ("Yes, as long as"), and its last line is the quote's."""
    from ragcli.retrieve.beside import with_answer_after

    text = ("**Can I use one license on two devices?** Yes, as long as\n"
            "both devices are yours. Licenses are per person.")
    chunks = [Chunk("f", "/v/FAQ.md", "FAQ", "FAQ", text, 10, 11)]
    asked = Quote(1, "**Can I use one license on two devices?**", "sentence", "/v/FAQ.md", "FAQ", "FAQ", 10, 10,
                  None, 0.5)
    shown = with_answer_after([asked], lambda path, heading: chunks)[0]
    assert shown.text.endswith("Yes, as long as both devices are yours.") and shown.line_end == 11
