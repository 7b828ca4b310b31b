"""A conversation over the notes: follow-ups rewritten into questions that stand alone.

``ChatSession`` holds the turns so far; its ``Notes`` holds the generator and the searcher
between questions (the model and the embedder load once). A question that looks like a follow-up ("and
how do I make it foldable?") is rewritten into a standalone question before retrieval
("how do I make callouts foldable?"): its pronoun takes the name of what the previous
answer was about (the note it cited first, else the previous question's subject), and a
bare "what about images?" takes the previous question's predicate. The rewrite is plain
text surgery, not the model: a 135M model rewrites poorly, and a rewrite that invents
would steer retrieval wrong. The rewritten question is what is searched, what the evidence
is scored against and what the model answers, so the same checks apply. Never prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..generate import OnToken
from ..retrieve.definitions import defined_phrase
from ..types import Answer
from ..words import asks_how, query_terms

_FOLLOW_UP_START = re.compile(
    r"^\s*(and|but|also|so|then|or|what about|how about|and what|same for|why|"
    r"what else|anything else|more on|tell me more|can i also|could i also)\b", re.I)
_ANAPHORA = re.compile(r"\b(it|its|it's|this|that|these|those|they|them|their|there|one|ones|"
                       r"he|she|him|her|such|above|same|former|latter)\b", re.I)


# Verbs that ask nothing of their own in a short question: "what ratio do I use?" asks for a
# ratio, of whatever the conversation is about
_LIGHT_VERBS = frozenset({"use", "need", "get", "go", "want"})


def looks_like_follow_up(question: str, before: str = "") -> bool:
    """Heuristic: a question that leans on the previous one for its subject. ``before``: what the
    turn before read (its quotes)."""
    words = query_terms(question) - _LIGHT_VERBS
    if _FOLLOW_UP_START.search(question):
        return True
    # "Why?", "Examples?" lean on the turn before; a whole question about one thing ("How long
    # should the shot take?" after the pour over's clicks) stands alone unless the turn before
    # read of that thing: the shot is the espresso's, not the pour over's.
    if len(words) <= 1 and (len(question.split()) <= 3 or not words or words & query_terms(before)):
        return True
    return bool(_ANAPHORA.search(question)) and len(words) <= 4


_LEAD = re.compile(r"^\s*(?:and|but|also|so|then|or|ok(?:ay)?|now)\b[\s,]*", re.I)
_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*\??\s*$", re.I)
# "And for pour over?", "and with oat milk?": the previous question, asked for something else
_AND_FOR = re.compile(r"^\s*(?:and|or)\s+(for|with|in|on|at|from)\s+(.+?)\s*\??\s*$", re.I)
_POSSESSIVE = re.compile(r"\b(its|their)\b", re.I)
_PRONOUN = re.compile(r"\b(it|this|that|them|they|these|those)\b", re.I)
# "how long", "how many": the question's frame with it ("long" in the rewritten "what ratio do I use
# (long should the shot take)?" was a word no note uses, and hedged the answer)
_QUESTION_HEAD = re.compile(r"^\s*(?:how(?:\s+(?:long|many|much|often|far|hot|big|old|soon))?|what|where|when|why|"
                            r"which|who|can|do|does|is|are|should)\b"
                            r"(?:\s+(?:do|does|can|should|is|are|would|could)\b)?(?:\s+(?:i|we|you)\b)?\s*", re.I)


_FRAGMENT_WORDS = 6  # a follow-up this short with no question word of its own is a fragment


def topic_of(turn: "Turn") -> str:
    """What a turn was about: the title of the note its answer cited first, unless it asked what a
    thing is and that note's title does not name it ("What is channeling in espresso?" cites the
    Espresso note: "how do I avoid it?" asks of "channeling in espresso"); else its question
    without the question words ("How do I create a callout?" -> "create a callout")."""
    thing = defined_phrase(turn.retrieval_query, where=True)
    named = query_terms(defined_phrase(turn.retrieval_query))
    answer = turn.answer
    if answer.covered and answer.sources:
        first = next((s for s in answer.sources if s.n in answer.cited), answer.sources[0])
        if first.title and named <= query_terms(first.title):
            return first.title
    return thing or _subject(turn)


def _subject(turn: "Turn") -> str:
    return _QUESTION_HEAD.sub("", turn.retrieval_query).rstrip(" ?.!") or turn.retrieval_query


# "How many clicks for espresso on my grinder?": what was asked (clicks) of what (espresso),
# and where (on my grinder). A bare "What ratio?" asks something else of the same thing.
_ASKED_OF = re.compile(r"^\s*(?:how\s+(?:many|much)|what|which)\s+(?:\w+\s+){1,2}?(?:for|of)\s+"
                       r"(?:(?:the|my|a|an|your|our)\s+)?(?P<of>[\w'-]+(?:\s+[\w'-]+)??)"
                       r"(?:\s+(?:on|in|with|at|from|by|to|when|if|do|does|should|is|are)\b.*)?\s*\??\s*$", re.I)


def _asked_of(turn: "Turn") -> str:
    """What the previous question asked something of ("espresso"), or ""."""
    match = _ASKED_OF.match(turn.retrieval_query)
    return match.group("of") if match else ""


# "there" after a question that named a place ("Where am I staying in Lisbon?"): that place
_THERE = re.compile(r"\bthere\b(?!\s+(?:is|are|was|were|be|a|an|any|some)\b)", re.I)
_TO_THERE = re.compile(r"\b(?:get|go|going|travel|drive|fly|walk|come|ride|move)\s+there\b", re.I)
_PLACE = re.compile(r"\b(in|at|to|near|around)\s+((?:the\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)")


def standalone(question: str, previous: "Turn") -> str:
    """A follow-up rewritten so it can be searched (and answered) without the conversation."""
    place = _PLACE.search(previous.retrieval_query)
    if place and _THERE.search(question):  # "What should I eat there?": in Lisbon, not "(am I staying in Lisbon)"
        text = _LEAD.sub("", question).strip()
        prep = "to" if _TO_THERE.search(text) else place.group(1)
        text = _THERE.sub(f"{prep} {place.group(2)}", text, count=1)
        return text[:1].upper() + text[1:]
    about = _ABOUT.match(question)
    if about:  # "what about images?": the previous question, asked of the new subject
        head = previous.retrieval_query.rstrip(" ?.!").split()
        keep = head[:-1] if len(head) > 3 else head
        while keep and keep[-1].lower() in ("a", "an", "the", "my", "of", "to", "in"):
            keep.pop()
        return " ".join(keep + [about.group(1).rstrip(" ?")]) + "?"
    other = _AND_FOR.match(question)
    if other:  # "And for pour over?" after "What ratio for espresso?": "What ratio for pour over?"
        prep, what = other.group(1).lower(), other.group(2)
        asked = previous.retrieval_query.rstrip(" ?.!")
        cut = asked.lower().rfind(f" {prep} ")
        return (asked[:cut] if cut > 0 else asked) + f" {prep} {what}?"
    topic = topic_of(previous)
    text = _LEAD.sub("", question).strip()
    if asks_how(previous.retrieval_query) and not _QUESTION_HEAD.match(text) and _PRONOUN.search(text) \
            and len(text.split()) <= _FRAGMENT_WORDS:
        # "and only one heading of it?" after "How do I embed one note inside another?" asks the same
        # how of part of it: "Only one heading of Embed files?" had lost the embedding, and was refused
        return f"{previous.retrieval_query.rstrip(' ?.!')}, {text.rstrip(' ?')}?"
    text = _POSSESSIVE.sub(lambda _m: f"the {topic}", text, count=1)
    text, n = _PRONOUN.subn(topic, text, count=1)
    if n == 0 and not _POSSESSIVE.search(question) and not query_terms(text):
        text = f"{text.rstrip(' ?')} {topic}?"  # "Why?" -> "Why create a callout?"
    elif n == 0 and not _POSSESSIVE.search(question) and not query_terms(topic) & query_terms(text):
        # "And how long should the shot take?" after the espresso ratio: the shot is the espresso's.
        # The earlier question says what it was about; the note it cited first may not ("what
        # ratio?" after the espresso clicks, which the Grinders note answered, is the espresso's).
        # Only that thing is carried over, not what was asked of it: "What ratio (many clicks for
        # espresso on my grinder)?" matched the grinder's clicks table and the pour over's ratio.
        of = _asked_of(previous)
        text = f"{text.rstrip(' ?')} for {of}?" if of else f"{text.rstrip(' ?')} ({_subject(previous)})?"
    return text[:1].upper() + text[1:] if text else question


@dataclass
class Turn:
    question: str
    retrieval_query: str
    answer: Answer


class ChatSession:
    """The turns of one conversation over a ``Notes`` (``Notes.chat()``), which keeps the
    model and the index loaded between questions, or has a running watcher answer them."""

    def __init__(self, notes):
        self.notes = notes
        self.turns: list[Turn] = []

    def retrieval_query(self, question: str) -> tuple[str, str]:
        """(the standalone question to search and answer, earlier question for the prompt)."""
        if not self.turns:
            return question, ""
        prev = self.turns[-1]
        # what the turn before read: its quotes (its searched words carry earlier turns' subjects)
        before = "\n".join(q.text for q in prev.answer.quotes) or prev.retrieval_query
        if not looks_like_follow_up(question, before):
            return question, ""
        return standalone(question, prev), prev.question

    def ask(self, question: str, on_token: OnToken | None = None, on_quotes=None) -> Answer:
        query, context = self.retrieval_query(question)
        result = self.notes.ask(question, on_token=on_token, on_quotes=on_quotes, retrieval_query=query,
                                context=context)
        self.turns.append(Turn(question, query, result))
        return result

    @property
    def last(self) -> Answer | None:
        return self.turns[-1].answer if self.turns else None

    def clear(self) -> None:
        self.turns.clear()
