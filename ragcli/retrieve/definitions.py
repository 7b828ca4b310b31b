"""What a thing is: "what is a vault?", "what are properties in Obsidian?", "what does pinning
mean?" are answered by the sentence that defines it ("A vault is a folder on your file system
...", "Properties allow you to organize information about a note"), which shares no more words
with the question than the steps that create one ("In Vault name, enter the name of your vault").
"""

from __future__ import annotations

import functools
import re

from ..words import answer_type, query_terms, split_words, stem

# "what is X", "what's X for", "what are X in Obsidian", "what does X mean": X, the thing asked about
_WHAT_IS = re.compile(r"(?:^|[.?!;:,]\s*)\W*(?:so\s+|and\s+|but\s+)?what(?:'s|’s|\s+is|\s+are)\s+(?:exactly\s+)?"
                      r"(?P<x>[^?.!;:,]+?)\s*(?:[?.!]|$)"
                      r"|(?:^|[.?!;:,]\s*)\W*what\s+(?:does|do)\s+(?P<y>[^?.!;:,]+?)\s+(?:mean|stand\s+for)\s*(?:[?.!]|$)",
                      re.I)
# what stands around the thing: an article before it; after it, where it is ("in Obsidian") or
# what it is for
_AROUND = re.compile(r"^(?:an?|the)\s+|\s+(?:(?:in|on|inside|within)\s+\S+(?:\s+\S+)?|used\s+for|for|exactly|about|"
                     r"anyway|actually)$", re.I)
MAX_WORDS = 4  # "what is the maximum file size for attachments on the Standard plan" asks a figure
# the verbs a definition opens with, after its subject and what it is of ("A backlink for a note
# is"); not a compound the subject opens ("Base files are stored ..."), nor what it does or is not
# ("Obsidian Publish is designed to ...", "is not")
_DEFINING = re.compile(r"^(?:(?:for|of|in|on)\s+(?:\S+\s+){0,3}?)?(?:(?:is|are)(?!\s+(?:not|never|\w+ed)\b)|"
                       r"refers?\s+to|means?|lets|allows?|helps?|"
                       r"gives|provides|shows|displays|enables|represents|describes|stands\s+for)\b", re.I)


@functools.lru_cache(maxsize=256)  # asked for every unit a question's evidence scores
def defined_thing(question: str) -> tuple[str, ...]:
    """The stemmed words of the thing a "what is X" question asks to be defined, in order; ()
    for any other question, or one whose X is a pronoun ("what is that?") or a long phrase."""
    return tuple(stem(w) for w in split_words(defined_phrase(question)))


def defined_phrase(question: str, where: bool = False) -> str:
    """The thing a "what is X" question asks to be defined, as typed ("channeling" of "What is
    channeling in espresso?"; with ``where``, "channeling in espresso"); "" for any other question
    (``defined_thing``)."""
    m = _WHAT_IS.search(question)
    if not m or answer_type(question) is not None:  # "what is the shortcut for undo": keys, not a definition
        return ""
    typed = (m.group("x") or m.group("y") or "").strip(" \"'“”‘’`")
    thing = typed
    for _ in range(3):
        thing = _AROUND.sub("", thing).strip(" \"'“”‘’`")
    words = split_words(thing)
    if not words or len(words) > MAX_WORDS or not query_terms(thing) or any(w in ("my", "your", "our") for w in words):
        return ""
    return re.sub(r"^(?:an?|the)\s+", "", typed, flags=re.I) if where else thing


def defines(text: str, thing: tuple[str, ...]) -> bool:
    """Does the text open by saying what ``thing`` is ("A vault is a folder ...", "Graph view is a
    core plugin that lets you ...", "Properties allow you to ...")?"""
    if not thing:
        return False
    words = split_words(text[:300])
    if words[:1] and words[0] in ("a", "an", "the"):
        words = words[1:]
    head = words[:len(thing)]
    if len(head) < len(thing) or not all(_same(stem(w), t) for w, t in zip(head, thing)):
        return False
    return bool(_DEFINING.match(" ".join(words[len(thing):len(thing) + 8])))


def _same(a: str, b: str) -> bool:
    """One word, its endings cut differently ("bas" of "bases", "base")."""
    return a == b or min(len(a), len(b)) >= 3 and abs(len(a) - len(b)) <= 2 and (a.startswith(b) or b.startswith(a))

