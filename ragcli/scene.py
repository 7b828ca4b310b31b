"""The scene a question is asked in: what the asker tells before asking ("oops, I committed too
early. how do I take that commit back?", "my espresso comes out sour and sprays everywhere, what am
I doing wrong?"). Its words set the scene; what is asked is in what follows (``pipeline.answer``
hedges, rather than refuses, a word or name no note holds that only the scene uses)."""

from __future__ import annotations

import re

from .words import CLAUSE_END, WORD


# A statement typed before the question, as users type: "oops, I committed too early. how do I take
# that commit back?", "Someone on the forum gave me a few lines of CSS to recolour my headings.
# Where do I put that?". Typed questions start their next sentence in lower case as often as not.
_STATED_BEFORE = re.compile(r"(?<!\b[A-Za-z])(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!]\s+(?=[\"'“(\[A-Za-z])")
# What the asker did or has, told in a clause of the question's own sentence: "my espresso comes
# out sour and sprays everywhere, what am I doing wrong?", "I have two monitors; can I ...?", "I'm putting
# out a reusable lib — is it ok to ...?"
# ... or with the "I'm" left out: "leaving Bear on my MacBook — what do I have to create in it first?"
PREMISE = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|we've|we'd|our)\s|"
                     r"^(?!(?:some|no|any|every)?thing\b|morning\b|evening\b|during\b|(?:st|sp)?ring\b)"
                     r"[a-z]{2,}ing\s", re.I)
_PREMISE_THEN_ASKED = re.compile(rf"^([^,;—–]+?){CLAUSE_END}\s*"
                                 r"((?:how|what|when|where|why|which|who|is|are|do|does|did|can|"
                                 r"could|should|would|will|any)\b.*)$", re.I | re.S)


def context_words(question: str) -> set[str]:
    """The lower-case words of the statements a question opens with, or of the clause in which
    the asker tells what they did or have, that the question itself, after them, does not use:
    {"oops", "committed", "early"} above. They set the scene; what is asked is in what follows."""
    *stated, asking = _STATED_BEFORE.split(question.strip()) or [""]
    if "?" in " ".join(stated):
        return set()
    told = _PREMISE_THEN_ASKED.match(asking.strip())
    if told and PREMISE.match(told.group(1)):
        stated, asking = [*stated, told.group(1)], told.group(2)
    if not stated:
        return set()
    return set(WORD.findall(" ".join(stated).lower())) - set(WORD.findall(asking.lower()))


def last_sentence(text: str) -> str:
    """The text's last sentence, as ``context_words`` splits a question's statements from it."""
    return _STATED_BEFORE.split(text.strip())[-1]


def of_scene(name: str, scene: set[str]) -> bool:
    """Is every word of the name one of the ``scene``'s (``context_words``): told, not asked about?"""
    words = set(WORD.findall(name.lower()))
    return bool(words) and words <= scene
