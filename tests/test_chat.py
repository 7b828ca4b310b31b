"""`rag chat`: follow-ups searched in context, piped questions (JSON Lines), and a real
terminal session driven through tmux (skipped when tmux is absent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from ragcli import Notes
from ragcli.pipeline.chat import looks_like_follow_up
from ragcli.config import load_config

from conftest import VAULT
from helpers import wait_for

CALLOUTS = str(VAULT / "Editing and formatting" / "Callouts.md")


def test_follow_up_heuristic():
    for q in ("And how do I make it foldable?", "what about images?", "Why?", "Can I nest them?",
              "How do I change its colour?"):
        assert looks_like_follow_up(q), q
    for q in ("How do I create a callout in a note?", "What is the capital of Australia?",
              "How can I show the contents of one note inside another note?"):
        assert not looks_like_follow_up(q), q
    # a whole question about one thing leans on the turn before only when that turn read of it
    pour_over = "How many clicks for pour over?\n| Pour over | 18 |"
    assert not looks_like_follow_up("How long should the shot take?", pour_over)
    assert looks_like_follow_up("How long should the shot take?", "Pull the shot in 25 to 30 seconds.")
    assert looks_like_follow_up("Examples?", pour_over)
    # "use" asks nothing of its own: "what ratio do I use?" asks a ratio of what the turn before read
    espresso = "Dose 18 g in, 36 g out, in 25 to 30 seconds. That 1:2 ratio is the starting point."
    assert looks_like_follow_up("what ratio do I use?", espresso)
    assert not looks_like_follow_up("what ratio do I use?", pour_over)


def test_session_combines_follow_ups_for_retrieval(help_vault_env):
    with Notes(load_config(env={**os.environ, **help_vault_env}), watcher=False) as notes:
        session = notes.chat()
        first = session.ask("How do I create a callout?")
        assert any(s.path == CALLOUTS for s in first.sources)
        second = session.ask("And how do I make it foldable?")
        rewritten = session.turns[-1].retrieval_query  # a standalone question, not the two glued
        assert "callout" in rewritten.lower() and "foldable" in rewritten and " it " not in f" {rewritten} "
        assert "create" not in rewritten.lower()
        assert any(s.path == CALLOUTS for s in second.sources)
        session.clear()
        assert session.retrieval_query("And how do I make it foldable?") == ("And how do I make it foldable?", "")


def test_the_model_reads_the_earlier_question_of_a_follow_up(help_vault_env):
    """A follow-up reaches the model with the question before it ("Earlier question: ..."), as
    ``answer``'s docstring says: "And how do I make it foldable?" alone does not say what "it" is."""
    with Notes(load_config(env={**os.environ, **help_vault_env, "RAG_MAX_TOKENS": "16"}), watcher=False) as notes:
        asked = dict(retrieval_query="How do I make a callout foldable?")
        alone = notes.ask("And how do I make it foldable?", **asked)
        followed = notes.ask("And how do I make it foldable?", context="How do I create a callout?", **asked)
    assert [q.text for q in alone.quotes] == [q.text for q in followed.quotes]
    assert alone.prompt_tokens and followed.prompt_tokens > alone.prompt_tokens


def test_follow_ups_are_rewritten_to_stand_alone():
    from ragcli.pipeline.chat import Turn, standalone
    from ragcli.types import Answer, Source

    cited = Answer("How do I create a callout?", "x [1].",
                   [Source(1, "/v/Callouts.md", "Callouts", "", 1, 2, None, 1.0)],
                   "m", {}, cited=[1], retrieval_query="How do I create a callout?")
    prev = Turn("How do I create a callout?", "How do I create a callout?", cited)
    assert standalone("And how do I make it foldable?", prev) == "How do I make Callouts foldable?"
    assert standalone("How do I change its colour?", prev) == "How do I change the Callouts colour?"
    uncited = Answer("How do I embed a note?", "", [], "m", {}, covered=False, retrieval_query="How do I embed a note?")
    prev = Turn("How do I embed a note?", "How do I embed a note?", uncited)
    assert standalone("what about images?", prev) == "How do I embed images?"
    assert standalone("Why?", prev) == "Why embed a note?"
    # a follow-up that names no subject of its own keeps the previous one beside it
    assert standalone("And how long should the shot take?", Turn("What espresso ratio do I use?",
                      "What espresso ratio do I use?", Answer("q", "", [], "m", {}, covered=False))) \
        == "How long should the shot take (espresso ratio do I use)?"
    grinders = Answer("q", "8 clicks [1].", [Source(1, "/v/Grinders.md", "Grinders", "", 1, 2, None, 1.0)], "m", {},
                      cited=[1])
    assert standalone("What ratio?", Turn("How many clicks for espresso?", "How many clicks for espresso?", grinders)) \
        == "What ratio for espresso?"  # the espresso's ratio, not the grinders' note's, nor its clicks'
    assert standalone("And how long should the shot take?", Turn("What ratio?", "What ratio for espresso?", grinders)) \
        == "How long should the shot take for espresso?"
    # "And for pour over?": the question before, asked for something else ("for pour over for espresso" was searched)
    assert standalone("And for pour over?", Turn("What ratio?", "What ratio for espresso?", grinders)) \
        == "What ratio for pour over?"
    assert standalone("and with oat milk?", Turn("How hot?", "How hot should I steam milk?", grinders)) \
        == "How hot should I steam milk with oat milk?"
    # "there" is the place the question before named: "(am I staying in Lisbon)" was searched beside
    # it, and its "staying", a word no note uses, refused the follow-up
    lisbon = Turn("Where am I staying in Lisbon?", "Where am I staying in Lisbon?",
                  Answer("q", "", [], "m", {}, covered=False))
    assert standalone("What should I eat there?", lisbon) == "What should I eat in Lisbon?"
    assert standalone("And how do I get there from the airport?", lisbon) == "How do I get to Lisbon from the airport?"
    assert standalone("Is there a tram?", lisbon) == "Is there a tram (am I staying in Lisbon)?"  # no place
    # what was asked of nothing in particular keeps the whole previous question beside it
    assert standalone("What ratio?", Turn("How many clicks?", "How many clicks?", grinders)) \
        == "What ratio (clicks)?"
    # ... without its frame: "long" is no word of what was asked ("(long should the shot take)" was
    # searched, and no note uses "long")
    shot = Turn("And how long should the shot take?", "How long should the shot take?", grinders)
    assert standalone("what ratio do I use?", shot) == "What ratio do I use (the shot take)?"


def test_piped_chat_json_answers_each_line_in_context(help_vault_env):
    env = {**os.environ, **help_vault_env}
    questions = "How do I create a callout?\n\nAnd how do I make it foldable?\n"
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "chat", "--json", "--max-tokens", "48"],
                          input=questions, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["question"] for r in lines] == ["How do I create a callout?", "And how do I make it foldable?"]
    assert all(r["sources"] for r in lines)
    assert CALLOUTS in [s["path"] for s in lines[1]["sources"]]


def test_a_bare_follow_up_is_answered_by_its_own_words(example_vault_env):
    # "What ratio?" is searched as "What ratio for espresso?": the espresso's ratio comes first,
    # not the pour over's, and not the grinder's clicks table. Then the shot time is the
    # Espresso note's, not "takes about three shots".
    env = {**os.environ, **example_vault_env}
    turns = ["How many clicks for espresso on my grinder?", "What ratio?", "And how long should the shot take?",
             "What ratio?", "And for pour over?", "How long should the shot take?"]
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "chat", "--json", "--max-tokens", "16"],
                          input="\n".join(turns) + "\n", capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(answers) == 6
    quoted = [" ".join(q["text"] for q in a["quotes"]) for a in answers]
    assert "| Espresso" in quoted[0]
    assert "1:2 ratio" in answers[1]["quotes"][0]["text"] and "Clicks" not in quoted[1]
    assert "1:16.7" not in quoted[1]  # the pour over's ratio is of something else: no place beside the espresso's
    assert "25 to 30 seconds" in quoted[2] and "three shots" not in quoted[2]
    assert "1:16.7" in quoted[4] and "Start here" not in quoted[4]  # the ratio again, of pour over
    # after pour over, "the shot" is no pour over's: the turn before read nothing of a shot
    assert "25 to 30 seconds" in quoted[5] and "2:45" not in quoted[5]



def test_a_question_whose_only_verb_is_use_follows_the_conversation(example_vault_env):
    """"what ratio do I use?" after the espresso's clicks and shot time asks the espresso's ratio:
    it was searched alone, and the pour over's ratio answered it."""
    env = {**os.environ, **example_vault_env}
    turns = ["How many clicks for espresso on my grinder?", "and how long should the shot take?",
             "what ratio do I use?"]
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "chat", "--json", "--max-tokens", "16"],
                          input="\n".join(turns) + "\n", capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(answers) == 3
    ratio = " ".join(q["text"] for q in answers[2]["quotes"])
    assert "1:2 ratio" in ratio and "1:16.7" not in ratio


def test_a_follow_up_to_what_a_thing_is_asks_of_that_thing(example_vault_env, monkeypatch):
    # "And how do I avoid it?" after "What is channeling in espresso?" was searched as "How do I
    # avoid Espresso?" (the title of the note cited) and quoted a new bag's three shots
    from ragcli.pipeline.chat import Turn, standalone

    for key, value in example_vault_env.items():
        monkeypatch.setenv(key, value)
    with Notes(watcher=False) as notes:
        first = notes.ask("What is channeling in espresso?", quotes_only=True)
        follow = standalone("And how do I avoid it?", Turn("What is channeling in espresso?",
                                                          "What is channeling in espresso?", first))
        answer = notes.ask("And how do I avoid it?", quotes_only=True, retrieval_query=follow)
    assert follow == "How do I avoid channeling in espresso?", follow
    shown = " ".join(q.text for q in answer.quotes)
    assert "needle tool" in shown and "three shots" not in shown, shown


def test_a_follow_up_to_a_how_to_question_is_answered_by_the_procedure(help_vault_env, monkeypatch):
    # "what about a custom title?" after the callout questions (searched as "How do I make Callouts a
    # custom title?"): its own words ask no "how", the question does; the example alone was quoted
    for key, value in help_vault_env.items():
        monkeypatch.setenv(key, value)
    with Notes(watcher=False) as notes:
        answer = notes.ask("what about a custom title?", quotes_only=True,
                           retrieval_query="How do I make Callouts a custom title?")
    first = answer.quotes[0]
    # the lead-in opens the quote's first line (after the sentence before it on its line, if shown)
    assert first.text.split("\n")[0].endswith("You can change it by adding text after the type identifier:"), first.text
    assert "> [!tip] Callouts can have custom titles" in first.text


def test_a_fragment_after_a_how_to_question_asks_the_same_how(help_vault_env):
    """"and only one heading of it?" after "How do I embed one note inside another?" was searched as
    "Only one heading of Embed files?" and refused: the embedding was lost. Asked with the question
    before it, the heading link syntax is quoted beside the embed."""
    from ragcli.pipeline.chat import Turn, standalone
    from ragcli.types import Answer

    asked = "How do I embed one note inside another?"
    before = Answer(asked, "", [], "m", {}, covered=False, retrieval_query=asked)
    assert standalone("and only one heading of it?", Turn(asked, asked, before)) == \
        "How do I embed one note inside another, only one heading of it?"
    with Notes(load_config(env={**os.environ, **help_vault_env}), watcher=False) as notes:
        chat = notes.chat()
        chat.ask(asked)
        answer = chat.ask("and only one heading of it?")
    assert answer.covered
    assert any("To link to a heading in another note" in q.text for q in answer.quotes), [q.text for q in answer.quotes]


def test_piped_chat_plain_text(example_vault_env):
    env = {**os.environ, **example_vault_env}
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "chat", "--max-tokens", "32"],
                          input="What espresso ratio do I use?\n", capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Q: What espresso ratio do I use?")
    assert "Espresso.md" in proc.stdout


# ---------------------------------------------------------------------------------------
# A real terminal: tmux send-keys to type, capture-pane to read

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    def __init__(self, env: dict[str, str]):
        self.name = f"ragchat-{uuid.uuid4().hex[:8]}"
        envs = " ".join(f"{k}={v}" for k, v in env.items())
        cmd = f"env {envs} {sys.executable} -m ragcli.cli chat --max-tokens 200"
        self._tmux("new-session", "-d", "-s", self.name, "-x", "160", "-y", "50", cmd)

    def _tmux(self, *args: str) -> str:
        # -L: a server of its own, its socket in tmux's short folder (a socket path has a
        # length limit that a deep temp folder can pass)
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True,
                              check=False).stdout

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name, "-S", "-200")

    def wait_for(self, predicate, timeout: float = 120.0) -> str:
        """The screen, once ``predicate`` holds for it."""
        def seen():
            text = self.screen()
            return text if predicate(text) else None
        return wait_for(seen, lambda: f"the screen to change; it was:\n{self.screen()}", timeout)

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.name, "has-session", "-t", self.name],
                              capture_output=True).returncode == 0

    def kill(self) -> None:
        self._tmux("kill-server")


def _prompt_ready(screen: str) -> bool:
    return screen.rstrip().endswith("›")


@needs_tmux
def test_terminal_session_stream_interrupt_history_exit(example_vault_env):
    tmux = Tmux({**example_vault_env, "OMP_WAIT_POLICY": "PASSIVE"})
    try:
        tmux.wait_for(_prompt_ready, 60)
        tmux.keys("What espresso ratio do I use?", "Enter")
        screen = tmux.wait_for(lambda s: "[1] line" in s and _prompt_ready(s.split("espresso ratio", 1)[-1]))
        assert "Espresso.md" in screen
        # a long answer, interrupted while it streams: the session goes on (a question the notes
        # cover plainly: beside passages that only may answer it, no model runs)
        tmux.keys("Explain how I make espresso, steam milk and brew pour over coffee", "Enter")

        def streaming(s: str) -> bool:
            # the question echoed first: on a busy machine the screen may not show it yet, and a
            # Ctrl-C then lands at the prompt, which only starts a fresh line
            if "Explain how I make espresso" not in s:
                return False
            tail = s.rstrip().split("Explain how I make espresso", 1)[-1]
            return "\n" in tail and len(tail.split("\n", 1)[-1].strip()) > 20  # text after the question line

        tmux.wait_for(streaming, 120)
        tmux.keys("C-c")
        screen = tmux.wait_for(lambda s: "(stopped)" in s and _prompt_ready(s), 30)
        assert tmux.alive()
        # /sources lists the last finished answer's sources
        tmux.keys("/sources", "Enter")
        tmux.wait_for(lambda s: s.count("Espresso.md") >= 2 and _prompt_ready(s), 30)
        # Up arrow recalls the previous line (readline history)
        tmux.keys("Up")
        tmux.wait_for(lambda s: s.rstrip().endswith("/sources"), 10)
        tmux.keys("C-u")
        # Ctrl-D leaves, and the history was written under the data dir
        tmux.keys("C-d")
        wait_for(lambda: not tmux.alive(), "chat to leave on Ctrl-D", 20)
        history = (load_config(env={**os.environ, **example_vault_env}).data_dir / "chat_history").read_text()
        assert "What espresso ratio do I use?" in history
    finally:
        tmux.kill()
