"""A word no note uses, in the user's own words: refused only when no quote says it otherwise.

The example vault, its real index and the real embedding model, through `rag ask --json`.
"""

from __future__ import annotations

import json

import pytest

from ragcli.cli import main
from ragcli.config import load_config
from ragcli.retrieve import Searcher
from ragcli.retrieve.relevance import said_otherwise


def _ask(monkeypatch, capsys, env: dict[str, str], question: str) -> dict:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["ask", question, "--quotes", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _shown(result: dict) -> str:
    return "\n".join([q["text"] for q in result["quotes"]] + [result["answer"]])


def test_a_word_said_in_other_words_is_heard_and_one_that_is_not_is_not(example_vault_env):
    searcher = Searcher(load_config(env=example_vault_env))
    try:
        texts = ["To log out and clear stored credentials: ob logout"]
        assert said_otherwise(["wipe", "loud"], texts, searcher.embed_passages) == ["wipe"]
        assert said_otherwise([], texts, searcher.embed_passages) == []
    finally:
        searcher.close()


def test_a_question_in_other_words_than_the_notes_is_answered(example_vault_env, monkeypatch, capsys):
    """No note says "loaf", but the Sourdough note's dough is one: the quotes are shown, the word
    named. Weak evidence for a word that nothing quoted comes near ("hotel") is still refused."""
    result = _ask(monkeypatch, capsys, example_vault_env, "How do I make my sourdough loaf, from mixing to baking?")
    assert result["covered"] and result["not_mentioned"] == ["loaf"]
    assert any(q["path"].endswith("Sourdough.md") for q in result["quotes"])
    result = _ask(monkeypatch, capsys, example_vault_env, "Which hotel are we staying at in Lisbon?")
    assert not result["covered"] and "hotel" in result["not_mentioned"]


def test_asking_what_went_wrong_is_the_question_s_frame_not_a_word_to_find(example_vault_env, monkeypatch, capsys):
    """No note says "went" or "wrong": the journal tells the fault in its own words ("the crust too
    pale"). "What went wrong" asks for a fault as "how long" asks for a duration."""
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "What went wrong with the Pi day bake, and what should I change next time?")
    assert result["covered"] and result["not_mentioned"] == []
    assert "crust too pale" in _shown(result) and "5 minutes longer" in _shown(result)


def test_words_that_say_when_or_stand_for_anything_are_no_words_to_find(example_vault_env, monkeypatch, capsys):
    """"without losing anything", "the difference between": no note need say "anything" or
    "difference" to answer; "right away" refused a question whose answer the notes hold."""
    from ragcli.pipeline.session import Session
    from ragcli.retrieve.relevance import unheard_words

    result = _ask(monkeypatch, capsys, example_vault_env, "What's the difference between DPR and BM25?")
    assert result["covered"] and result["not_mentioned"] == [] and "Dense retrieval wins" in _shown(result)
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "How do I get rid of untracked files without losing anything?")
    assert result["covered"] and "anything" not in result["not_mentioned"] and "git clean -n" in _shown(result)
    with Session(load_config(env=example_vault_env)) as session:
        df = session.open_reader().keyword_df
        assert unheard_words("How do I install my package so edits show up right away?", df) == []
        assert unheard_words("Which hotel is near somewhere else?", df) == ["hotel"]
        # "again", "each time": when, not what; "in actual numbers": the form a figure answers in
        assert unheard_words("How do I install my package without installing it again each time?", df) == []
        # "the grinder I wrote about": which note is meant, no word of what is asked
        assert "wrote" not in unheard_words("Is the grinder I wrote about any good for espresso?", df)
        assert unheard_words("Do the grinders clean themselves?", df) == []  # a pronoun, whatever it stands for
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "how much better was DPR than BM25 in that paper I read, in actual numbers?")
    assert result["covered"] and "numbers" not in result["not_mentioned"] and "78.4%" in _shown(result)


def test_how_come_and_even_though_are_no_words_to_find(example_vault_env, monkeypatch, capsys):
    """"How come DPR can search so quickly when a question comes in, even though it uses BERT?" was
    refused for "come", "comes", "even", "though", words of the asking and joining that no note of
    the example vault uses; the DPR note says why ("encoded once, offline")."""
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "How come DPR can search so quickly when a question comes in, even though it uses BERT?")
    assert result["covered"] and "encoded once, offline" in _shown(result), result
    assert not {"come", "comes", "even", "though"} & set(result["not_mentioned"]), result["not_mentioned"]


def test_asking_what_follows_or_what_causes_it_is_no_part_said_missing(example_vault_env, monkeypatch, capsys):
    """"What happens past that?" beside "above 70 °C it tastes cooked" was said missing for "happens"
    and "past", words no note uses; "what could cause it?" for "cause", beside "drip lines fail above 3 bar"."""
    result = _ask(monkeypatch, capsys, example_vault_env, "How hot should I steam milk, and what happens past that?")
    assert result["missing_parts"] == [] and "above 70 °C it tastes cooked" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "The drip lines keep failing; what could cause it?")
    assert result["missing_parts"] == [] and "fail above 3 bar" in _shown(result), result


def test_asking_what_i_wrote_about_a_thing_searches_for_the_thing(example_vault_env, monkeypatch, capsys):
    """"What did I note about channeling?" was refused: "note" found the Notes on Karpukhin first,
    and the Espresso note's "Channeling shows up as spritzing" is 0.03 from the question in the
    embedding model's meaning, a word it does not know; the note holds the one word asked about."""
    result = _ask(monkeypatch, capsys, example_vault_env, "What did I note about channeling?")
    assert result["covered"] and "Channeling shows up as spritzing" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "Anything I wrote down about the tram?")
    assert result["covered"] and result["not_mentioned"] == [] and "tram 28" in _shown(result), result
    from ragcli.words import without_notes_frame

    mine = "Is there a free way to keep what I write on my phone and laptop matching?"
    assert without_notes_frame(mine) == mine  # what is written is the subject there, not the frame


def test_asking_to_be_reminded_or_which_notes_mention_a_thing_is_answered_by_the_thing(
        example_vault_env, monkeypatch, capsys):
    """"remind me what the RB-75 is" was refused naming "remind", "which of my notes mention the
    Comandante?" naming "mention"; then, with those words read as the frame, for the grinder's name
    being far (0.2) from the question in the embedding model's meaning, though the notes say it."""
    from ragcli.words import without_notes_frame

    result = _ask(monkeypatch, capsys, example_vault_env, "Remind me what the RB-75 is")
    assert result["covered"] and result["not_mentioned"] == [] and "Rain Bird RB-75" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "Which of my notes mention the Comandante?")
    assert result["covered"] and {"Grinders.md", "Pour over.md"} <= {q["path"].rsplit("/", 1)[-1]
                                                                    for q in result["quotes"]}, result
    for asked in ("How do I show my notes in a grid?", "Which notes are shown in the graph?",
                  "What do I have to do before syncing?"):
        assert without_notes_frame(asked) == asked
    result = _ask(monkeypatch, capsys, example_vault_env, "What do I know about BM25?")  # "know" was named
    assert result["covered"] and result["not_mentioned"] == [] and "keyword ranking function" in _shown(result)


def test_a_name_typed_without_its_accents_is_the_name_the_note_writes(example_vault_env, monkeypatch, capsys):
    """"pasteis de Belem" is the Lisbon note's "pastéis de Belém": refused for "The notes found never
    mention “Belem”", the note's words read as "bel" and "m"."""
    from ragcli.words import query_terms

    assert query_terms("the pastéis de Belém bakery") == query_terms("the pasteis de Belem bakery")
    result = _ask(monkeypatch, capsys, example_vault_env, "When should I go to the pasteis de Belem bakery?")
    assert result["covered"] and "go mid-afternoon" in _shown(result), result


def test_a_loose_how_many_is_no_word_to_find(help_vault_env, monkeypatch, capsys):
    """"a bunch of", "lots of": how many, said loosely. No note says "bunch", and the question
    was refused for it ("No note mentions “bunch”") though its note was found."""
    from ragcli.words import query_terms

    assert query_terms("I just deleted a bunch of big files") == query_terms("I just deleted big files")
    assert "lot" in query_terms("the parking lot")  # a lot that is a thing stays
    result = _ask(monkeypatch, capsys, help_vault_env, "I just deleted a bunch of big files, so when will the "
                  "storage bar in the Sync settings reflect that?")
    assert result["covered"] and "bunch" not in result["not_mentioned"]
    assert any(q["path"].endswith("Sync settings and selective syncing.md") for q in result["quotes"])


def test_each_is_no_word_a_part_must_find(example_vault_env, monkeypatch, capsys):
    """"how long should each shot take" is "how long should the shot take": read as a word the
    answer must hold, "each" left the part under its floor, said missing beside its own answer."""
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "How many clicks for espresso, and how long should each shot take?")
    assert result["missing_parts"] == []
    assert "in 25 to 30 seconds" in _shown(result)


def test_a_part_asking_for_a_thing_no_note_names_is_said_missing(example_vault_env, monkeypatch, capsys):
    """"which brand of flour": no note says "brand" or anything near it, though the unit picked for
    the part (on flour and feeding) scores like an answer. The other part is answered."""
    question = "When do I feed my starter before baking, and which brand of flour do I buy?"
    result = _ask(monkeypatch, capsys, example_vault_env, question)
    assert result["covered"] and result["missing_parts"] == ["which brand of flour do I buy"]
    assert "1:5:5" in _shown(result)


@pytest.mark.parametrize("question, shown", [
    # no note says "leave", but the station is quoted
    ("How long is the train out to Sintra, and which station does it leave from?", "Rossio"),
    # no note says "belongs": "what" opens a question about a verb as often as about a thing
    ("What belongs in the parts list for the irrigation, and what is the schedule?", "Hunter X-Core"),
])
def test_a_part_using_a_word_no_note_holds_is_answered_when_what_it_asks_is_quoted(
        example_vault_env, monkeypatch, capsys, question, shown):
    """Each part was judged on its own words, so the answer is not hedged as a whole: "may answer
    it" would take back what the parts found."""
    result = _ask(monkeypatch, capsys, example_vault_env, question)
    assert result["missing_parts"] == [] and shown in _shown(result)
    assert result["not_mentioned"] and not result["tentative"]


def test_an_answered_question_in_parts_is_printed_without_the_hedge(example_vault_env, monkeypatch, capsys):
    for key, value in example_vault_env.items():
        monkeypatch.setenv(key, value)
    assert main(["ask", "How long is the train out to Sintra, and which station does it leave from?", "--quotes"]) == 0
    out = capsys.readouterr().out
    assert "Rossio" in out and "may answer it" not in out and "No note uses" not in out
    # a single question with a word no note uses is still hedged, and says which word
    assert main(["ask", "How do I make my sourdough loaf, from mixing to baking?", "--quotes"]) == 0
    out = capsys.readouterr().out
    assert "No note uses \u201cloaf\u201d." in out and "may answer it" in out


def test_a_strong_quote_is_not_hedged_for_a_word_no_note_uses(example_vault_env, monkeypatch, capsys):
    """No note says "transit", and the Lisbon note's card answers it: shown plainly, as an answer,
    the word still named in the JSON."""
    question = "Which transit card should I buy in Lisbon?"
    result = _ask(monkeypatch, capsys, example_vault_env, question)
    assert result["covered"] and not result["tentative"] and result["not_mentioned"] == ["transit"]
    assert "Viva Viagem" in _shown(result)
    assert main(["ask", question, "--quotes"]) == 0
    out = capsys.readouterr().out
    assert "Viva Viagem" in out and "may answer it" not in out and "No note uses" not in out


def test_no_model_sentence_for_a_question_using_a_word_no_note_uses(example_vault_env, monkeypatch, capsys):
    """The parts are answered, so the answer is not hedged; but the model, run on it, said "The
    valve I chose for the garden is the 16 mm drip line" (no note says "choose"): the quotes are
    the answer."""
    for key, value in example_vault_env.items():
        monkeypatch.setenv(key, value)
    question = ("Which valve did I choose for the garden, what pressure is the regulator set to, "
                "and what runs the schedule?")
    assert main(["ask", question, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["covered"] and not result["tentative"] and result["not_mentioned"] == ["choose"]
    assert result["generated"] == "" and "RB-75" in _shown(result)


HEADLESS_NOTES = ("Obsidian Sync/Headless Sync.md", "Obsidian Publish/Headless Publish.md",
                  "Extending Obsidian/Obsidian Headless.md", "Plugins/Audio recorder.md")


def test_a_part_is_answered_from_the_section_its_own_words_name(tmp_path, models_dir):
    """"How do I install the headless client, and can it transcribe my voice memos?": the whole
    question names none of the hits' headings better than another; its first part names the
    Headless note's "Install", where the `npm install` block stands. The hits are the ones the
    help vault's search gives, in its order (the 4 notes indexed alone, the real chunks)."""
    from conftest import VAULT as HELP
    from ragcli.pipeline import index
    from ragcli.pipeline.answer import _idf
    from ragcli.retrieve.evidence import select_evidence
    from ragcli.retrieve.parts import question_parts
    from ragcli.types import Hit

    if not HELP.is_dir():
        pytest.skip("../shared/corpora is not present")
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in HEADLESS_NOTES:
        (vault / name.split("/")[-1]).write_text((HELP / name).read_text(encoding="utf-8"), encoding="utf-8")
    env = {"RAG_HOME": str(tmp_path / "home"), "RAG_MODELS_DIR": str(models_dir)}
    index(load_config(env=env), [vault])
    searcher = Searcher(load_config(env=env))
    try:
        def hit(name: str, heading: str, rank: int) -> Hit:
            chunk = next(c for c in searcher.index.section_chunks(str(vault / name), heading) if c.heading == heading)
            return Hit(chunk, 0.5, rank)

        hits = [hit("Headless Sync.md", "Headless Sync", 1), hit("Headless Publish.md", "Headless Publish", 2),
                hit("Obsidian Headless.md", "Obsidian Headless", 3),
                hit("Obsidian Headless.md", "Obsidian Headless > Install", 4),
                hit("Audio recorder.md", "Audio recorder", 1)]
        question = "How do I install the headless client, and can it transcribe my voice memos?"
        evidence = select_evidence(question, hits, searcher.embed_passages, _idf(searcher),
                                   parts=question_parts(question), part_floor=0.25)
    finally:
        searcher.close()
    assert "npm install -g obsidian-headless" in evidence.quotes[0].text


def test_capitalised_words_in_a_row_are_one_name_and_unknown_when_no_note_says_them_together(example_vault_env):
    """"Google Calendar" is not named by notes that say "Google" and "calendar" apart: the example
    vault says "Baratza" and "Comandante" (two grinders), never "Baratza Comandante"."""
    from ragcli.retrieve.relevance import names_in, names_not_in, unknown_names

    assert names_in("How do I hook my vault up to Google Calendar so my meetings become notes?") == ["Google Calendar"]
    assert names_in("What is the maximum file size on Sync Standard and Sync Plus?") == ["Sync Standard", "Sync Plus"]
    assert names_in("I use Obsidian. Sync is great") == ["Obsidian"]  # a sentence's first word is no name
    # two capitals are a word more than a name: no note says "PC", and the installer note answers this
    assert names_in("Our IT department needs to roll the app out to every staff PC; is there an installer?") == []
    # an acronym's plural is its singular's name: the report says "Abbreviated New Drug Application (ANDA)"
    assert names_in("What review goal does the plan set for generic drug applications (ANDAs)?") == ["ANDA"]
    assert names_not_in(names_in("Which APIs and PDFs does it list?"), ["an API", "each PDF"]) == []
    searcher = Searcher(load_config(env=example_vault_env))
    try:
        df = searcher.index.keyword_df
        assert unknown_names("Does the Baratza Comandante grind fine enough?", df) == ["Baratza Comandante"]
        assert unknown_names("Does the Baratza Encore grind fine enough?", df) == []
    finally:
        searcher.close()


def test_a_name_the_question_likens_its_ask_to_is_not_required_of_the_notes(example_vault_env, monkeypatch, capsys):
    """"..., like in GitHub Desktop?" asks for the undo the Git note gives; no note names GitHub
    Desktop, and none needs to. A name asked about is still required ("move my vault to Logseq")."""
    from ragcli.retrieve.relevance import names_in, without_likened

    assert names_in("Can I type in several spots at once, like in VS Code?") == []
    # nor are its words what the answer's words are matched on ("Code" drew the notes on code blocks)
    assert "Code" not in without_likened("Can I type in several spots at once, like in VS Code?")
    assert without_likened("How do I move my vault over to Logseq?") == "How do I move my vault over to Logseq?"
    assert names_in("Can I fold lists the way Workflowy does?") == []
    assert names_in("How do I move my vault over to Logseq?") == ["Logseq"]
    assert names_in("Does my vault open in Logseq like in Obsidian?") == ["Logseq"]
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "How do I undo my last commit but keep the changes, like in GitHub Desktop?")
    assert result["covered"] and "git reset --soft HEAD~1" in _shown(result)


def test_a_part_asking_a_quality_no_passage_names_is_said_missing(example_vault_env, monkeypatch, capsys):
    """"how hard should the water be": the coffee notes name no hardness (nearest "slow", 0.46);
    the ratio part is answered. "How wet is my dough" is not said missing: the Sourdough note says
    "hydration" and "dry"."""
    from ragcli.retrieve.parts import asked_quality

    assert asked_quality("how hard should the water be") == "hard"
    assert asked_quality("how long should the shot take") == ""  # a figure, not a quality
    assert asked_quality("how well does it grind") == ""  # a manner
    question = "What brew ratio do I use for espresso, and how hard should the water be?"
    result = _ask(monkeypatch, capsys, example_vault_env, question)
    assert result["covered"] and result["missing_parts"] == ["how hard should the water be"]
    assert "1:2" in _shown(result)
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "How wet is my sourdough dough and how long does the first rise take?")
    assert result["covered"] and "How wet is my sourdough dough" not in result["missing_parts"]



def test_a_word_the_hits_say_otherwise_though_no_quote_does_is_heard(help_vault_env, example_vault_env,
                                                                     monkeypatch, capsys):
    """"I wiped out a paragraph ... can I get an earlier copy back": no note says "wiped", and no
    word of the quotes comes within 0.50 of it (0.46); the best hits (File recovery, Version
    history) hold one that does. The passages are shown as ones that may answer it, the word named;
    a word nothing read says otherwise ("steeping" for cold brew, in the example vault) is refused."""
    question = "I wiped out a paragraph an hour ago by mistake; can I get an earlier copy back without paying?"
    result = _ask(monkeypatch, capsys, help_vault_env, question)
    assert result["covered"] and result["not_mentioned"] == ["wiped"]
    assert any(q["path"].endswith("File recovery.md") for q in result["quotes"])
    result = _ask(monkeypatch, capsys, example_vault_env, "What ratio and steeping time do I use for cold brew?")
    assert not result["covered"] and "steeping" in result["not_mentioned"]


def test_a_name_no_passage_read_holds_is_refused_however_close_the_quotes(example_vault_env, monkeypatch, capsys):
    """"What grind setting do I use for an AeroPress?" reads the grinder table (best quote over the
    evidence floor), but no note says "AeroPress": the settings are for other brewers."""
    result = _ask(monkeypatch, capsys, example_vault_env, "What grind setting do I use for an AeroPress?")
    assert not result["covered"] and result["not_mentioned"] == ["AeroPress"] and result["not_found"] == []
    result = _ask(monkeypatch, capsys, example_vault_env, "What grind setting do I use for espresso on the Comandante?")
    assert result["covered"] and "8" in _shown(result)


def test_names_are_read_as_the_notes_would_write_them():
    """A date is no name; a question in title case has none; a name is found case aside, word by
    word, letters apart from digits ("FY2016" in a file named "..._fy2016.pdf")."""
    from ragcli.retrieve.relevance import names_in, names_not_in

    assert names_in("What name does it give a note created on 1 January at 09:45?") == []
    assert names_in("How Do I Tuck Away My Sections?") == []
    assert names_in("How do I move my vault over to Logseq?") == ["Logseq"]
    texts = ["Set the Hunter x core timer", "/r/opm_report_fy2016.pdf", "IRS forms; see Publication 17"]
    assert names_not_in(["X-Core", "FY2016", "IRS Publication", "Logseq", "FY2022"], texts) == ["Logseq", "FY2022"]


def test_a_way_to_see_a_figure_is_not_a_question_for_the_figure():
    from ragcli.words import asks_figure

    assert not asks_figure("How can I see how many people visit my published site?")
    assert not asks_figure("I publish my notes. How can I see how many people visit my site?")
    assert asks_figure("How many clicks on the Comandante do I use for espresso?")
    assert asks_figure("How do I know how long to proof the dough?")


def test_a_word_a_note_uses_in_another_form_is_heard(example_vault_env, monkeypatch, capsys):
    """The Lisbon note says "go mid-afternoon": "goes" is that word, which no ending rule joins to it.
    Named as a word no note uses, it hedged "what goes in my sourdough?" as "may answer it"."""
    from ragcli.words import forms

    assert set(forms("went")) == set(forms("goes")) >= {"go", "gone"} and forms("left") == ("left",)
    searcher = Searcher(load_config(env=example_vault_env))
    try:
        from ragcli.retrieve.relevance import unheard_words

        assert unheard_words("What goes in my sourdough?", searcher.index.keyword_df) == []
        assert unheard_words("What belongs in my sourdough?", searcher.index.keyword_df) == ["belongs"]
    finally:
        searcher.close()
    result = _ask(monkeypatch, capsys, example_vault_env, "What goes in my sourdough?")
    assert result["covered"] and not result["tentative"] and "500 g bread flour" in _shown(result)


def test_a_circumstance_is_never_said_missing(example_vault_env, monkeypatch, capsys):
    """", when installing a Python package" says when the question applies and asks nothing: read as
    a part, it printed "Your notes don't say: when installing a Python package?" under the answer.
    A clause that asks when ("when is it worse") is still a part that can be missing."""
    from ragcli.retrieve.parts import asks_nothing

    assert asks_nothing("when installing a Python package") and not asks_nothing("when is it worse")
    # what the asker tells, then a question in the same part: the question asks (u4-19 was refused
    # with its one asking part said missing)
    assert asks_nothing("I committed too early") and asks_nothing("I use v2.1. I want it")
    assert not asks_nothing("I bought my brother some credit as a present. Can he hand it on to a friend")
    question = "What is editable mode for, when installing a Python package?"
    result = _ask(monkeypatch, capsys, example_vault_env, question)
    assert result["missing_parts"] == [] and "pip install -e ." in _shown(result)


def test_a_word_of_the_statement_typed_before_the_question_is_no_word_to_find(example_vault_env, monkeypatch,
                                                                              capsys):
    """"oops, I committed too early. how do I take that commit back ...?" was refused because no
    note says "oops" or "early": the statement sets the scene, the sentence after it asks, and the
    Git note answers it. A word no note uses in the sentence that asks still refuses."""
    from ragcli.scene import context_words
    assert context_words("oops, I committed too early. how do I take that commit back?") == {
        "oops", "committed", "too", "early"}
    assert context_words("How do I froth milk for a flat white?") == set()
    assert context_words("Why? Because I asked. How?") == set()  # a question before: no statement to set aside
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "oops, I committed too early. how do I take that commit back but still have my edits?")
    assert result["covered"] and "git reset --soft HEAD~1" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "We love Lisbon. Which hotel are we staying at?")
    assert not result["covered"] and "hotel" in result["not_mentioned"]


def test_a_part_asking_how_much_of_a_thing_no_note_names_is_said_missing(example_vault_env, monkeypatch, capsys):
    """"how much fertiliser should the tomatoes get, and how often?": the watering schedule's
    minutes were taken for the amount, and "fertiliser" for a word the schedule says otherwise
    ("irrigation", 0.50). The thing a part asks an amount of must be named, or nearly. "and how
    often?" asks how often to feed them, not to water them: a part with no word of its own is
    missing with the part before it, so the question is refused rather than answered with the
    schedule's "every day"."""
    from ragcli.pipeline.unsaid import with_parts_that_follow
    parts = ["how much fertiliser should the tomatoes get", "how often"]
    assert with_parts_that_follow(parts, parts[:1]) == parts
    assert with_parts_that_follow(parts, []) == []  # the part before answered: it stands
    assert with_parts_that_follow(["how much salt", "how long does it rise"], ["how much salt"]) == ["how much salt"]
    result = _ask(monkeypatch, capsys, example_vault_env, "how much fertiliser should the tomatoes get, and how often?")
    assert not result["covered"] and "fertiliser" in result["not_mentioned"], result
    assert "every day" not in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "how much fertiliser should the tomatoes get, and when?")
    assert not result["covered"], result
    # a part that points back to the thing asked for, which no note names, asks about it too
    hotel = ["which hotel did we book for the lisbon trip", "how far is it from the metro"]
    assert with_parts_that_follow(hotel, hotel[:1], ["hotel"]) == hotel
    assert with_parts_that_follow(hotel, hotel[:1], []) == hotel[:1]  # missing for another reason: it stands
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "which hotel did we book for the lisbon trip, and how far is it from the metro?")
    assert not result["covered"] and "hotel" in result["not_mentioned"], result
    # the same question of a thing the notes name is answered in full
    result = _ask(monkeypatch, capsys, example_vault_env, "how much salt goes in my bread, and how long does it rise?")
    assert result["missing_parts"] == [], result


def test_what_the_asker_tells_first_sets_the_scene(example_vault_env, monkeypatch, capsys):
    """"my espresso comes out sour and sprays everywhere, what am I doing wrong?" was refused for
    "sprays", a word of what the asker tells, not of what they ask (the Espresso note's channeling
    "shows up as spritzing and a sour, thin shot"). A word of the scene set before the question
    ("I want to bake tomorrow.") does not refuse; it hedges, as any word no note uses does."""
    from ragcli.scene import context_words
    assert context_words("my espresso comes out sour and sprays everywhere, what am I doing wrong?") == {
        "my", "espresso", "comes", "out", "sour", "and", "sprays", "everywhere"}
    assert context_words("which grinder, and how fine?") == set()  # no premise: nothing set aside
    # a dash or a colon ends the premise as a comma does
    assert context_words("I'm putting out a lib for others — is it ok to pin its dependencies?") == {
        "i", "m", "putting", "out", "a", "lib", "for", "others"}
    assert context_words("Our admins are asking: which port does it use?") == {"our", "admins", "are", "asking"}
    assert context_words("How do I pin x - y?") == set()
    assert "timer" in context_words("I set the timer to 10:30, how long does it run?")  # a time's colon ends nothing
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "my espresso comes out sour and sprays everywhere, what am I doing wrong?")
    assert result["covered"] and "spritzing" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "I want to bake tomorrow. When do I need to feed the starter?")
    assert result["covered"] and result["tentative"] and "the night before" in _shown(result), result


def test_a_scene_told_in_a_clause_without_its_subject_is_set_aside(example_vault_env, monkeypatch, capsys):
    """Users drop the "I'm": "leaving Bear on my MacBook — what do I have to create in it first ...?"
    tells where they come from as "I'm leaving Bear ..." would, and was refused for "MacBook". A
    name told there is named and hedged; a name in what is asked still refuses."""
    from ragcli.scene import context_words
    assert context_words("leaving Bear on my MacBook — what do I have to create in it first?") == {
        "leaving", "bear", "on", "my", "macbook"}
    assert context_words("Using templates, how do I add a date?") == {"using", "templates"}
    assert context_words("Something broke, how do I fix it?") == set()  # no -ing: no premise
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "using my Breville at home — how many grams of coffee go into an espresso?")
    assert result["covered"] and result["tentative"] and "Breville" in result["not_mentioned"], result
    assert "Dose 18 g in" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "how many grams of coffee go into a Breville espresso?")
    assert not result["covered"], result


def test_a_question_whose_every_asking_part_is_said_missing_is_refused(example_vault_env, monkeypatch, capsys):
    """"I grow tomatoes on the balcony, how much fertiliser should they get?" asks one thing, which
    no note says; the watering schedule shown under "Your notes don't say: how much fertiliser
    ..." answered nothing."""
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "I grow tomatoes on the balcony, how much fertiliser should they get?")
    assert not result["covered"] and "fertiliser" in result["not_mentioned"], result


def test_a_particle_and_what_is_done_without_are_no_words_to_find(example_vault_env, monkeypatch, capsys):
    """"take that back" is the Git note's "undo", "without losing my edits" its "keep the changes":
    no note says "back" or "losing", and the question was refused."""
    from ragcli.pipeline.session import Session
    from ragcli.retrieve.relevance import unheard_words

    with Session(load_config(env=example_vault_env)) as session:
        df = session.open_reader().keyword_df
        assert unheard_words("How do I throw the junk away without deleting my drafts?", df) == ["throw", "junk"]
        assert unheard_words("Which hotel can I hunt down?", df) == ["hotel", "hunt"]
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "I committed way too early. How do I take that back without losing my edits?")
    assert result["covered"] and "git reset --soft HEAD~1" in _shown(result)


def test_a_name_told_before_the_question_is_named_not_refused(example_vault_env, monkeypatch, capsys):
    """"I keep my beans in a Fellow Atmos canister.": what the asker has, not what they ask about, as
    the words of a scene are; the clicks are shown, hedged, the name said to be in no note. Asked of
    the name itself, the question is still refused."""
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "I keep my beans in a Fellow Atmos canister. How many clicks for espresso on my grinder?")
    assert result["covered"] and result["tentative"] and "Fellow Atmos" in result["not_mentioned"]
    assert "Settings I use" in _shown(result)
    result = _ask(monkeypatch, capsys, example_vault_env, "How many clicks for espresso on my Fellow Atmos grinder?")
    assert not result["covered"] and "Fellow Atmos" in result["not_mentioned"]


def test_an_everyday_word_no_note_uses_is_hedged_not_refused(example_vault_env, monkeypatch, capsys):
    """"pulling" a shot is the asker's phrasing: the Grinders note answers, named and hedged. A
    rarer word no note uses ("descale"), or an everyday one that is the thing asked for ("which
    hotel"), still refuses."""
    result = _ask(monkeypatch, capsys, example_vault_env,
                  "Is the electric grinder I wrote about any good for pulling espresso shots?")
    assert result["covered"] and result["tentative"] and result["not_mentioned"] == ["pulling"]
    assert "not fine enough for espresso" in _shown(result)
    result = _ask(monkeypatch, capsys, example_vault_env, "Which hotel are we staying at in Lisbon?")
    assert not result["covered"] and "hotel" in result["not_mentioned"]
    result = _ask(monkeypatch, capsys, example_vault_env, "How often should I descale the espresso machine?")
    assert not result["covered"] and "descale" in result["not_mentioned"]


def test_everyday_words_are_the_vocabularys_commonest():
    from ragcli.retrieve.spelling import is_common_word

    assert all(is_common_word(w) for w in ("money", "movie", "tiny", "birthday", "pulling", "spots"))
    assert not any(is_common_word(w) for w in ("frost", "wrist", "descale", "flashcards", "zzzz"))


def test_a_part_is_not_said_missing_for_an_everyday_word(help_vault_env, monkeypatch, capsys):
    """"... will I get kicked off my phone and laptop?": no note says "kicked", and the 2FA FAQ's
    "Will I be logged out of my current Obsidian devices? No." answers it; the part is not said
    missing beside it."""
    question = ("If I turn on the authenticator-app step at login, will I get kicked off my phone and laptop? "
                "And if I switch it off and on later, can I reuse the old QR code?")
    result = _ask(monkeypatch, capsys, help_vault_env, question)
    assert result["covered"] and "Will I be logged out of my current Obsidian devices?" in _shown(result)
    assert not any("kicked" in part for part in result["missing_parts"]), result["missing_parts"]


def test_a_word_naming_the_figure_asked_is_said_by_a_figure_of_its_kind(example_vault_env, monkeypatch, capsys):
    """"what temperature should the milk be?" was hedged for "temperature", a word no note uses,
    beside "Steam whole milk to 60 °C": a figure of the kind asked, in a quote holding the
    question's other words, says it. The milk's 60 °C says no water temperature for espresso."""
    result = _ask(monkeypatch, capsys, example_vault_env, "what temperature should the milk be?")
    assert result["covered"] and not result["tentative"] and "60 °C" in _shown(result), result
    assert "temperature" not in result["not_mentioned"], result
    result = _ask(monkeypatch, capsys, example_vault_env, "what water temperature should I use for espresso?")
    assert result["tentative"] and "temperature" in result["not_mentioned"], result
    # so do other quantities: "24 V AC" is the valve's voltage (it was refused: no note says "voltage")
    result = _ask(monkeypatch, capsys, example_vault_env, "what voltage is the valve")
    assert result["covered"] and "24 V AC" in _shown(result) and "voltage" not in result["not_mentioned"], result


def test_a_word_the_notes_write_as_two_is_heard(example_vault_env, monkeypatch, capsys):
    """"how do I turn on vim keybindings?" was hedged for "keybindings" beside Settings' "Vim key
    bindings"; the Lisbon note's "Day trip to Sintra" is a "daytrip" too. A word whose two halves
    some note writes as a phrase is the notes' word."""
    result = _ask(monkeypatch, capsys, example_vault_env, "how long is the daytrip to Sintra?")
    assert result["covered"] and "daytrip" not in result["not_mentioned"] and not result["tentative"], result
    assert "40 minutes" in _shown(result)
    result = _ask(monkeypatch, capsys, example_vault_env, "Which hotel are we staying at in Lisbon?")
    assert not result["covered"] and "hotel" in result["not_mentioned"]  # no "ho tel": still unheard


def test_a_letter_dropped_from_a_notes_word_is_that_word(example_vault_env, monkeypatch, capsys):
    """"whats the grnder setting for pourover?" was refused: "No note mentions “grnder”", though the
    search read it as "grinder". A word a letter short of one the notes hold is that word; a word
    the search would "fix" into another ("invent" into "indent") is still said unheard."""
    from ragcli.retrieve.relevance import unheard_words

    result = _ask(monkeypatch, capsys, example_vault_env, "whats the grnder setting for pourover?")
    assert result["covered"] and "grnder" not in result["not_mentioned"], result
    assert "18" in _shown(result)
    slips = {"grnder": "grinder", "invent": "indent"}
    heard = unheard_words("which grnder do I invent?", lambda queries: [0] * len(queries),
                          lambda words, leave=None: {w: slips[w] for w in words if w in slips})
    assert heard == ["invent"]


def test_a_note_holding_every_word_but_everyday_ones_is_not_refused(example_vault_env, monkeypatch, capsys):
    """"is a backflow preventer needed?" was refused before any quote was read (the embedding model
    scores the irrigation note low), and "what does WDT mean" at the evidence floor, though the
    notes say "A backflow preventer is required" and "a needle tool (WDT)": "needed" and "mean" are
    everyday words the notes put their own way. A question asking a figure still needs every word:
    "How much did the Hunter X-Core timer cost?" is no question the parts list answers."""
    result = _ask(monkeypatch, capsys, example_vault_env, "is a backflow preventer needed?")
    assert result["covered"] and "backflow preventer is required" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "what does WDT mean")
    assert result["covered"] and "needle tool (WDT)" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "How much did the Hunter X-Core timer cost?")
    assert not result["covered"], result
    # of everyday words only, the doing asked is the one the note says its own way: "avoid" is
    # "Distribute with a needle tool (WDT) before tamping"; the thing done to is still needed
    result = _ask(monkeypatch, capsys, example_vault_env, "how do i avoid channeling")
    assert result["covered"] and "Channeling shows up" in _shown(result), result
    result = _ask(monkeypatch, capsys, example_vault_env, "how do i avoid burnout")
    assert not result["covered"], result
