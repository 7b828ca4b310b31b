"""What a quote must carry to answer (issue 19, items 1-3): the whole procedure a how-to
question asks for, the lead-in with the block it introduces, the sentence that gives the step
rather than the one that restates the question.

Units from real Markdown, scored by the real embedding model over the example vault's index.
"""

from __future__ import annotations


from ragcli.retrieve.evidence import select_quotes, split_units
from ragcli.words import asks_whether
from ragcli.retrieve.parts import question_parts
from ragcli.types import Chunk, Hit


def _idf(searcher):
    def idf(terms: list[str]) -> dict[str, float]:
        return dict(zip(terms, searcher.index.keyword_idf([f'"{t}"' for t in terms])))
    return idf


def _best(searcher, question: str, *chunks: Chunk):
    hits = [Hit(c, 1.0 - i / 10, i + 1) for i, c in enumerate(chunks)]
    return select_quotes(question, hits, searcher.embed_passages, _idf(searcher), max_quotes=1)[0]


def test_a_leading_scope_is_no_part_of_its_own():
    """"In a base, ..." says where the question stands: read as a part, its quote took the place
    of the answer's. The parts after it are read beside the whole question, which holds it."""
    assert len(question_parts("In a base, how do I work out a date two weeks after a project's start?")) == 1
    assert question_parts("In clipper templates, which operator checks that two values differ, and how do I "
                          "loop over a list of authors?") == [
        "which operator checks that two values differ", "how do I loop over a list of authors"]
    # a clause that asks something is a part, whatever it opens with
    assert len(question_parts("When do I feed my starter before baking, and which brand of flour do I buy?")) == 2
    # ... and one that says when the question applies is its circumstance, no part (users2 u2-45)
    assert question_parts("After I record a lecture into a note, can Obsidian transcribe the audio into text for "
                          "me?") == ["can Obsidian transcribe the audio into text for me"]
    assert question_parts("If I uninstall Obsidian from my Android phone, do I lose my notes?") == [
        "do I lose my notes"]


def test_a_how_to_question_is_answered_by_the_sentence_that_gives_the_step(searcher):
    """The section's opening sentence shares as many of the question's words, and says what a
    callout is for; "To create a callout, add ..." says how."""
    text = ("Use callouts to include additional content without breaking the flow of your notes.\n\n"
            "To create a callout, add `[!info]` to the first line of a blockquote, where `info` is the "
            "type identifier.\n\n"
            "Unless you customize callouts, any unsupported type defaults to the `note` type.")
    chunk = Chunk("c", "/v/Callouts.md", "Callouts", "Callouts", text, 10, 14)
    best = _best(searcher, "How do I create a callout in a note?", chunk)
    assert best.text.startswith("To create a callout, add `[!info]`")


def test_a_how_to_question_is_answered_by_the_steps_not_one_step(searcher):
    """Under "Import your recipes into Cookbook" every step shares the heading's words with the
    question, and "You're done!" read alone scored as well as any: the numbered list is the answer."""
    text = ("You will need the Importer plugin, which you can install from the plugin list.\n\n"
            "1. Open **Settings**.\n2. Go to **Plugins** and install Importer.\n3. Enable the Importer plugin.\n"
            "4. Under **File format** choose **Recipe box (.zip)**.\n5. Click **Import**.\n6. You're done!\n")
    chunk = Chunk("c", "/v/Import recipes.md", "Import from Recipe box",
                  "Import from Recipe box > Import your recipes into Cookbook", text, 17, 24)
    best = _best(searcher, "i want to move my recipe box recipes into cookbook, how do i do it", chunk)
    assert best.kind == "steps" and best.text.startswith("1. Open **Settings**.") and best.text.endswith("You're done!")
    # a question that asks no procedure is still answered by the step that says it
    best = _best(searcher, "Which file format do I choose to import from Recipe box?", chunk)
    assert best.kind == "item" and "Recipe box (.zip)" in best.text


def test_a_procedure_in_two_sections_is_quoted_whole(searcher):
    """"Move my recipes into Cookbook" is the export's steps, then the import's: the export's
    heading shares fewer of the question's words, and alone its steps fell under the floor."""
    export = ("1. Go to [Recipe Takeout](https://takeout.example.com) and sign in.\n"
              "2. Click **Deselect all**.\n3. Select **Recipes** from the list.\n4. Click **Create export**.\n"
              "5. Download the `.zip` file once it is available.\n")
    imports = ("You will need the Importer plugin, which you can install from the plugin list.\n\n"
               "1. Open **Settings**.\n2. Go to **Plugins** and install Importer.\n3. Enable the Importer plugin.\n"
               "4. Under **File format** choose **Recipe box (.zip)**.\n5. Click **Import**.\n6. You're done!\n")
    title = "Import from Recipe box"
    path = "/v/Import recipes.md"
    first = Chunk("a", path, title, f"{title} > Import your Recipe box data into Cookbook", imports, 15, 24)
    second = Chunk("b", path, title, f"{title} > Export your data from Recipe box", export, 8, 12)
    hits = [Hit(first, 1.0, 1), Hit(second, 0.8, 2)]
    question = "i want to move my recipe box recipes into cookbook, how do i do it"
    quotes = select_quotes(question, hits, searcher.embed_passages, _idf(searcher))
    steps = [q for q in quotes if q.kind == "steps"]
    assert [q.line_start for q in steps] == [8, 17], [(q.kind, q.text[:40]) for q in quotes]  # as the note runs


def test_code_is_quoted_with_the_sentence_that_leads_into_it(searcher):
    """For "how do I", the example alone scored best; the sentence before it says what it does.
    A callout typed as code keeps its '>' marks: they are the code."""
    text = ("By default, the title of the callout is its type identifier in title case. You can change it "
            "by adding text after the type identifier:\n\n```markdown\n> [!tip] Callouts can have custom titles\n"
            "> Like this one.\n```\n")
    chunk = Chunk("c", "/v/Callouts.md", "Callouts", "Callouts > Change the title", text, 35, 41)
    best = _best(searcher, "How do I give a callout a custom title?", chunk)
    assert best.kind == "block" and best.text.startswith("You can change it by adding text"), best.text
    assert best.text.endswith("> [!tip] Callouts can have custom titles\n> Like this one.")


def test_a_unit_that_only_repeats_the_question_is_not_the_answer(searcher):
    """The list item "Obsidian Sync" holds nothing the question does not: the lead-in with its
    list says the refund's terms."""
    text = ("We offer full refunds within 7 days of purchase with no questions asked for the following "
            "services:\n\n- Obsidian Publish\n- Obsidian Sync\n")
    chunk = Chunk("c", "/v/Refund policy.md", "Refund policy", "Refund policy", text, 10, 13)
    best = _best(searcher, "Can I get a refund for Obsidian Sync?", chunk)
    assert "7 days" in best.text and "Obsidian Sync" in best.text


def test_a_short_paragraph_leads_into_its_block_whole():
    """"Here's an example:" alone does not say what the table is for; its paragraph does."""
    text = ("You can create tables using vertical bars (`|`) to separate columns and hyphens (`-`) to "
            "define headers. Here's an example:\n\n```md\n| First name | Last name |\n| --- | --- |\n"
            "| Max | Planck |\n```\n")
    units = split_units(Hit(Chunk("c", "/v/n.md", "N", "N > Tables", text, 10, 17), 1.0, 1))
    block = next(u for u in units if u.kind == "block")
    assert block.text.startswith("You can create tables using vertical bars")
    assert block.text.endswith("| Max | Planck |") and (block.line_start, block.line_end) == (10, 15)


def test_a_code_sample_of_a_code_block_keeps_its_inner_fences():
    """The example of nesting code blocks is its inner fences: a lead-in quoted with it keeps them."""
    text = ("To nest code blocks, use four or more backticks for the outer block:\n"
            "`````md\n````md\n```js\nconsole.log(\"Hello world\")\n```\n````\n`````\n")
    units = split_units(Hit(Chunk("c", "/v/n.md", "N", "N > Nesting code blocks", text, 1, 8), 1.0, 1))
    block = next(u for u in units if u.kind == "block")
    assert block.text.split("\n")[1:] == ["````md", "```js", "console.log(\"Hello world\")", "```", "````"]


def test_a_run_of_code_with_no_word_in_it_is_no_quote():
    """A long code block is read in runs of lines; the `---` between two slides was a run of its
    own, and quoted alone for "what does the slides plugin do?"."""
    slides = "\n\n---\n\n".join(f"## Slide {n}\n\nSome text for slide {n}." for n in range(1, 6))
    text = f"To separate slides, enter `---` at the start of a line.\n\n```md\n{slides}\n```\n"
    units = split_units(Hit(Chunk("c", "/v/Slides.md", "Slides", "Slides", text, 1, 30), 1.0, 1))
    code = [u.text for u in units if u.kind == "code"]
    assert "## Slide 1" in code[0] and all(any(ch.isalnum() for ch in c) for c in code)

def test_an_example_is_read_with_the_sentence_it_illustrates():
    """"For example: `[[2023-01-01#^37066d]]`." alone does not say what it is an example of; the
    sentence before it does not show the syntax. Each is scored alone and quoted with the other."""
    text = ("A block is a unit of text in your note, such as a paragraph or a list item.\n\n"
            "You can link to a block by adding `#^` at the end of your link destination, followed by a unique "
            "block identifier. For example: `[[2023-01-01#^37066d]]`. Fortunately, you don't need to find the "
            "identifier by hand: when you type the caret, a list of suggestions appears, and you pick the block.")
    units = split_units(Hit(Chunk("c", "/v/n.md", "N", "N > Link to a block", text, 1, 3), 1.0, 1))
    link = next(u for u in units if "#^" in u.text)
    example = next(u for u in units if u.text.startswith("For example"))
    assert link.shown == example.shown == link.text + " " + example.text
    assert link.shown.endswith("For example: `[[2023-01-01#^37066d]]`.") and link.passage[1:] == (3, 3)


def test_a_quote_whose_words_another_quote_holds_is_said_once():
    """The plan table's row says what the FAQ's sentence says, in fewer words: shown beside it,
    it is read twice. The row of storage says something new, and stays."""
    from ragcli.retrieve.once import said_once

    faq = Chunk("a", "/v/FAQ.md", "FAQ", "FAQ > How large can each file be?",
                "The maximum file size depends on your plan. For the Standard plan the limit is 5 MB. "
                "For the Plus plan the limit is 200 MB per file.", 51, 51)
    plans = Chunk("b", "/v/Plans.md", "Plans", "Plans", "| | Standard | Plus |\n|---|---|---|\n"
                  "| Maximum file size | 5 MB | 200 MB |\n| Total storage | 1 GB | 10 GB |\n", 19, 22)
    sentence = next(u for u in split_units(Hit(faq, 1.0, 1)) if "Standard" in u.text)
    size, storage = [u for u in split_units(Hit(plans, 0.9, 2)) if u.kind == "row"]
    kept = said_once([(0.71, sentence), (0.66, size), (0.6, storage)])
    assert [u for _s, u in kept] == [sentence, storage]


def test_a_report_row_given_again_under_another_label_is_said_once():
    """A report prints a measure's row in its table and again under "PERFORMANCE MEASURE:" on a
    later page: the same five results read three times. A note's Mobile steps beside its Desktop
    steps share their numbers 1 to 3 and are another procedure."""
    from ragcli.retrieve.once import said_once

    pdf = "/v/performance_report_fy2016.pdf"
    row = ("Percent of customers satisfied with overall retirement services — FY 2014 Results: 78%; "
           "FY 2015 Results: 76.5%; FY 2016 Results: 72.2%; FY 2016 Target: ≥75%")
    table = Chunk("t", pdf, "Report", "Report", row, 53, 53, page=91)
    again = Chunk("m", pdf, "Report", "Report", "PERFORMANCE MEASURE: " + row, 82, 82, page=93)
    other = Chunk("o", pdf, "Report", "Report", "Percent of retirement calls handled — FY 2014 Results: 76%; "
                  "FY 2015 Results: 72%; FY 2016 Results: 66.8%; FY 2016 Target: ≥78%", 60, 60, page=91)
    first, second, third = (split_units(Hit(c, 1.0, 1))[0] for c in (table, again, other))
    assert [u for _s, u in said_once([(0.7, first), (0.69, second), (0.6, third)])] == [first, third]
    steps = Chunk("s", "/v/Link notes.md", "Link notes", "Link notes > Navigate",
                  "**Desktop**\n\n1. Click **More options**.\n2. Select **Open linked view**.\n"
                  "3. Select **Open local graph**.\n4. Click any node.\n\n**Mobile**\n\n1. Tap **More options**.\n"
                  "2. Select **Open local graph**.\n3. Click any node.\n", 40, 50, page=None)
    blocks = [u for u in split_units(Hit(steps, 1.0, 1)) if u.kind in ("block", "steps")]
    assert len(said_once([(0.7 - i / 100, u) for i, u in enumerate(blocks)])) == len(blocks)

def test_code_that_differs_from_other_code_is_not_said_twice():
    """Two nginx blocks whose words are the same but for `$request_uri`: both answers stand."""
    from ragcli.retrieve.once import said_once

    text = ("```nginx\nlocation /my-notes {\n  proxy_pass https://publish.obsidian.md/serve?url=mysite.com/my-notes/;\n"
            "}\n```\n\nOr, to keep the path:\n\n```nginx\nlocation /my-notes {\n  proxy_pass "
            "https://publish.obsidian.md/serve?url=mysite.com/my-notes$request_uri;\n}\n```\n")
    units = split_units(Hit(Chunk("c", "/v/n.md", "N", "N > NGINX", text, 70, 83), 1.0, 1))
    plain = next(u for u in units if u.kind == "code" and "my-notes/;" in u.text)
    kept_path = next(u for u in units if u.kind == "block")
    assert len(said_once([(0.67, plain), (0.66, kept_path)])) == 2


def test_a_question_for_the_keys_is_answered_by_the_step_that_names_them(searcher):
    """"What's the keyboard shortcut for the command palette?": the note's opening sentence says
    "keyboard shortcuts" and "keyboard"; the step "Press `Ctrl+P` ..." names the keys. Another
    note's keys ("Focus the previous field: `Shift+Tab`") are another thing's, and stay out."""
    palette = ("The Launcher lets you run any action directly from your keyboard, and explore every action "
               "with its keyboard shortcut.\n\nTo run an action from the Launcher:\n\n"
               "1. Press `Ctrl+P` (or `Cmd+P` on macOS) to open the Launcher.\n"
               "2. Type the name of the action you want to run.\n3. Move to the action with the arrow keys.\n"
               "4. Press `Enter`.\n")
    fields = "Action | Hotkey\n--- | ---\nFocus the previous field | `Shift+Tab`\nFocus the next field | `Tab`\n"
    hits = [Hit(Chunk("a", "/v/Launcher.md", "Launcher", "Launcher", palette, 4, 13), 1.0, 1),
            Hit(Chunk("b", "/v/Fields.md", "Fields", "Fields > Keyboard shortcuts", fields, 30, 33), 0.9, 2)]
    for question in ("What's the keyboard shortcut for the Launcher?", "How do I open the Launcher from the keyboard?"):
        quotes = select_quotes(question, hits, searcher.embed_passages, _idf(searcher))
        assert "Ctrl+P" in quotes[0].text, (question, [q.text for q in quotes])
        assert all(q.path == "/v/Launcher.md" for q in quotes), (question, [q.text for q in quotes])
    # asking to change a shortcut asks a way, not the keys
    from ragcli.words import answer_type
    assert answer_type("I hate one of the default keyboard shortcuts, can I change it to my own keys?") is None
    assert answer_type("Can I use filesystem shortcuts to pull in a folder on another disk?") is None


def test_one_thing_done_between_two_is_one_part():
    """"Switch between reading and editing view" asks one thing; "the difference between tags and
    folders" two. "Save each layout and switch between them": "and" joins two asks, not two things."""
    assert len(question_parts("Is there a hotkey to switch between reading and editing view?")) == 1
    assert len(question_parts("How do I move notes between folders and vaults?")) == 1
    assert question_parts("Should I choose between tags and folders?") == [
        "Should I choose between tags", "Should I choose between folders"]
    assert question_parts("I keep rearranging my panes; can I save each layout and switch between them?") == [
        "I keep rearranging my panes", "can I save each layout and switch between them"]


def test_a_short_name_is_held_by_the_word_it_opens():
    """"Undo on a Mac": the notes say "macOS". A name no word opens is still not held."""
    from ragcli.retrieve.relevance import names_not_in

    said = ["Press `Ctrl+Z` (Windows) or `Cmd+Z` (macOS) to undo."]
    assert names_not_in(["Mac", "Windows"], said) == []
    assert names_not_in(["Logseq", "Win"], said) == ["Logseq"]
    assert names_not_in(["FY20"], ["report_fy2016.pdf"]) == ["FY20"]  # digits are whole


def test_a_numbers_name_is_a_name():
    """"Make the graph view 3D": "3D" names a thing, as "Logseq" does; a two-letter word in
    capitals still does not ("every staff PC"), nor a year after "FY"."""
    from ragcli.retrieve.relevance import names_in

    assert names_in("How can I make the graph view 3D?") == ["3D"]
    assert names_in("How do I set up 2FA on my account?") == ["2FA"]
    assert names_in("Can I roll the app out to every staff PC?") == []
    assert names_in("What were the FY 2016 results?") == []


def test_when_asks_the_condition_as_well_as_the_time(searcher):
    """"When" asks a time or the circumstance: read as a time only, the note's one month answered
    "When must I never open the relief valve?" in place of "above 3 bar"."""
    text = ("Check the gauge before every use.\n\n"
            "Never open the relief valve above 3 bar; let the canner cool first.\n\n"
            "The annual service is in October, at the shop on Rua Augusta.")
    chunk = Chunk("c", "/v/Pressure canner.md", "Pressure canner", "Pressure canner > Safety", text, 3, 7)
    assert "above 3 bar" in _best(searcher, "When must I never open the relief valve?", chunk).text
    assert "October" in _best(searcher, "When is the annual service?", chunk).text
    # "When" opening the question's second sentence asks as much as opening its first
    shots = Chunk("s", "/v/Espresso.md", "Espresso", "Espresso", "Dialling in a new bag of beans takes about "
                  "three shots.\n\nStop the shot at 25 to 30 seconds.", 3, 5)
    assert "25 to 30 seconds" in _best(searcher, "I opened a new bag of beans. When do I stop the shot?", shots).text


def test_what_a_thing_is_is_answered_by_the_sentence_that_defines_it(searcher):
    """"What are properties in Obsidian?" shares as many words with the CLI's "Commands related to
    Properties" and with the steps under "Property types" as with the note's opening, which says
    what properties are; "what is a vault?" quoted "In Vault name, enter the name of your vault"."""
    cli = Chunk("c", "/v/Obsidian CLI.md", "Obsidian CLI", "Obsidian CLI > Properties",
                "Commands related to Properties.", 722, 722)
    lead = Chunk("p", "/v/Properties.md", "Properties", "Properties",
                 "Properties allow you to organize information about a note. Properties contain structured data "
                 "such as text, links, dates, checkboxes, and numbers.", 16, 16)
    types = Chunk("t", "/v/Properties.md", "Properties", "Properties > Add properties to a note > Property types",
                  "A property's type determines what kind of values it can store and how Obsidian handles them.",
                  35, 35)
    assert _best(searcher, "what are properties in obsidian?", cli, types, lead).text.startswith(
        "Properties allow you to organize")
    steps = Chunk("s", "/v/Create a vault.md", "Create a vault", "Create a vault > Create empty vault",
                  "1. In **Vault name**, enter the name of your vault.\n2. Click **Create**.", 15, 17)
    manage = Chunk("m", "/v/Manage vaults.md", "Manage vaults", "Manage vaults",
                   "A **vault** is a folder on your file system which contains your notes, attachments, and the "
                   "configuration folder with Obsidian-specific settings.", 8, 8)
    assert "is a folder on your file system" in _best(searcher, "What's a vault?", steps, manage).text


def test_the_thing_a_question_asks_to_be_defined():
    from ragcli.retrieve.definitions import defined_thing, defines

    assert defined_thing("what are backlinks?") == ("backlink",)
    assert defined_thing("what's the graph view for?") == ("graph", "view")
    assert defined_thing("What is canvas in Obsidian") == ("canva",)
    assert defined_thing("what does pinning mean?") == defined_thing("what is pinning?")
    # a figure, keys, the user's own thing or a pronoun: no definition asked
    for question in ("What is the maximum file size for attachments on the Standard plan?",
                     "What is the shortcut for undo on a Mac?", "What is my espresso recipe?",
                     "I keep seeing frontmatter, what is that?", "How do I create a vault?"):
        assert defined_thing(question) == (), question
    backlink = defined_thing("what are backlinks?")
    assert defines("A backlink for a note is a link from another note to that note.", backlink)
    base = defined_thing("what is a base?")
    assert defines("**Bases** is a core plugin that lets you create database-like views.", base)
    # what a thing's compound does, what it is designed for, or is not, says nothing of what it is
    assert not defines("Base files are stored in your vault.", base)
    assert not defines("Obsidian Publish is designed to primarily process plain text files.",
                       defined_thing("what is Obsidian Publish?"))
    assert not defines("Backlinks are not shown for unresolved links.", backlink)


def test_a_question_for_the_kinds_there_are_is_answered_by_the_list_of_them(searcher):
    """"What are the ways to sync my notes?" shares most words with the list's first item ("First-party
    sync: Obsidian Sync") and the sentence above it; the list under its lead-in names every way."""
    text = ("With Obsidian your data is simply stored as files in a folder called a vault. This means there are "
            "many ways to sync your data.\n\nThese are a few commonly used sync methods reported by members of "
            "the community:\n\n1. **First-party sync**: Obsidian Sync\n2. **Third-party cloud sync**: iCloud, "
            "OneDrive, and Google Drive\n3. **Local sync**: Syncthing\n4. **Version control**: Git and Working Copy\n")
    chunk = Chunk("c", "/v/Sync your notes across devices.md", "Sync your notes across devices",
                  "Sync your notes across devices > Syncing methods", text, 20, 27)
    best = _best(searcher, "What are the ways to sync my notes?", chunk)
    assert "Local sync" in best.text and "Version control" in best.text
    # a figure asked of a kind is still a figure, and no list is asked for
    from ragcli.words import asks_list

    assert asks_list("which import formats are supported?") and asks_list("what callout types are there?")
    assert not asks_list("what type of file is a canvas?") and not asks_list("How do I sync my vault?")


def test_things_that_can_or_do_are_asked_for_as_a_list():
    """"What actions can a link trigger?" asks for the actions, as "what kinds" does (the
    answers: test_answer.py's test_things_that_can_be_chosen_...)."""
    from ragcli.words import asks_list

    assert asks_list("What actions can an obsidian:// link trigger?")
    assert asks_list("Which AI providers does Web Clipper's Interpreter support?")
    assert not asks_list("What does the slides plugin do?") and not asks_list("Which keys does undo use?")


def test_a_bold_question_of_two_sentences_is_one_sentence():
    """An FAQ's bold question ("**What if I miss a payment ...? Will I lose my remote vault
    data?**") was cut in two, and the quote began "Will I lose my remote vault data?** No, ...",
    its bold unclosed; footnote marks ("gross income** was") open no bold."""
    from ragcli.words import split_sentences

    faq = ("**What if I miss a payment and my subscription expires? Will I lose my remote vault data?** "
           "No, your data is retained for 30 days. If you do not resubscribe, it is deleted.")
    assert split_sentences(faq) == [faq[:faq.index("30 days.") + 8], "If you do not resubscribe, it is deleted."]
    table = "Single under 65. THEN file a return if your gross income** was at least. Another one."
    assert len(split_sentences(table)) == 3


def test_what_is_needed_is_asked_for_as_a_list():
    """What one needs is a list of things; what one needs to do or know is not."""
    from ragcli.words import asks_list

    assert asks_list("What do I need to buy for the garden irrigation?")
    assert not asks_list("What do I need to do to publish a note?")
    assert not asks_list("What do I need to know about Sync?")


def test_two_items_of_one_short_list_are_quoted_as_the_list(searcher):
    """"Which places are on our list for Lisbon?" quoted Belém and Alfama and left out Sintra, the
    list's third line: two of its items chosen apart, the list is quoted whole in their place."""
    text = ("- Belém: the tower and the pastéis de Belém bakery (go mid-afternoon).\n"
            "- Alfama: walk up to the Miradouro de Santa Luzia at sunset.\n"
            "- Day trip to Sintra by train from Rossio station, 40 minutes.\n")
    chunk = Chunk("p", "/v/Lisbon trip.md", "Lisbon trip", "Lisbon trip > Places", text, 17, 19)
    lead = Chunk("l", "/v/Lisbon trip.md", "Lisbon trip", "Lisbon trip", "Second week of May, with Ana.", 8, 8)
    quotes = select_quotes("Which places are on our list for Lisbon?", [Hit(chunk, 1.0, 1), Hit(lead, 0.5, 2)],
                           searcher.embed_passages, _idf(searcher))
    assert any("Belém" in q.text and "Sintra" in q.text for q in quotes)
    assert sum("Alfama" in q.text for q in quotes) == 1


def test_one_item_of_a_list_of_three_is_quoted_with_its_list(searcher):
    """"Optionally, provide a `digits` parameter ..." extends the item above it, and the example
    below shows it: asked how to keep two digits, the reader needs all three lines. A longer list
    is still quoted by the item chosen."""
    text = ("`number.round(digits: number): number`\n\n"
            "- Rounds the number to the nearest integer.\n"
            "- Optionally, provide a `digits` parameter to round to that number of decimal places.\n"
            "- Example: `(2.5).round()` returns `3`, and `(2.3333).round(2)` returns `2.33`.\n")
    chunk = Chunk("r", "/v/Functions.md", "Functions", "Functions > Number type > round()", text, 378, 382)
    question = "my formula gives 3.14159265 and I only want two decimal places, how do I cut it down?"
    quotes = select_quotes(question, [Hit(chunk, 1.0, 1)], searcher.embed_passages, _idf(searcher))
    assert any("nearest integer" in q.text and "returns `2.33`" in q.text for q in quotes)
    longer = Chunk("r", "/v/Functions.md", "Functions", "Functions > Number type > round()",
                   text + "- Returns a number.\n", 378, 383)
    quotes = select_quotes(question, [Hit(longer, 1.0, 1)], searcher.embed_passages, _idf(searcher))
    assert not any("nearest integer" in q.text and "Returns a number" in q.text for q in quotes)


def test_a_dash_ends_what_the_asker_tells_before_asking_whether():
    assert asks_whether("my laptop already syncs through the normal app — can I also run the sync client?")
    assert asks_whether("I use the desktop app - can I also run the sync client?")
    assert not asks_whether("my laptop syncs through the app — how do I run the sync client?")


FAQ = ("**Can I use the commercial license I purchased on both my work phone and work computer?** Yes. The "
       "commercial license is charged per seat count, not per device. This means you can use the same license key "
       "on all your individual work devices.")


def test_a_question_asking_whether_is_quoted_with_its_whole_paragraph(searcher):
    """The paragraph (270 characters) is over the length quoted whole around its best sentence;
    asked whether, its last sentence is the condition or the "so": "Yes. ... charged per seat
    count, not per device" needs "This means you can use the same license key on all your ...
    devices". Asked how it is charged, the paragraph is no longer than that length allows."""
    chunk = Chunk("c", "/v/Commercial license.md", "Commercial license", "Commercial license > FAQ", FAQ, 79, 80)
    whether = _best(searcher, "Can I use one commercial license on both my work laptop and my work phone?", chunk)
    assert whether.text == FAQ and whether.line_start == 79
    how = _best(searcher, "How is the commercial license charged?", chunk)
    assert "same license key" not in how.text
    assert all(u.passage is None for u in split_units(Hit(chunk, 1.0, 1)))
