"""A conversation over the notes: follow-ups searched in light of what came before.

``ChatSession`` holds the generator and the searcher between questions (the model and the
embedder load once) and the turns so far. A 135M model rewrites follow-up questions
poorly, so retrieval does not depend on it: a question that looks like a follow-up
("and how do I make it foldable?") is searched together with the previous question, and
the previous question is shown to the model as context. Never prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import Config
from ..generate import Generator, OnToken
from ..types import Answer
from ..words import query_terms
from .answer import answer
from .session import Session

_FOLLOW_UP_START = re.compile(
    r"^\s*(and|but|also|so|then|or|what about|how about|and what|same for|why|"
    r"what else|anything else|more on|tell me more|can i also|could i also)\b", re.I)
_ANAPHORA = re.compile(r"\b(it|its|it's|this|that|these|those|they|them|their|there|one|ones|"
                       r"he|she|him|her|such|above|same|former|latter)\b", re.I)


def looks_like_follow_up(question: str) -> bool:
    """Heuristic: a question that leans on the previous one for its subject."""
    words = query_terms(question)
    if _FOLLOW_UP_START.search(question):
        return True
    if len(words) <= 1:  # "Why?", "Examples?"
        return True
    return bool(_ANAPHORA.search(question)) and len(words) <= 4


@dataclass
class Turn:
    question: str
    retrieval_query: str
    answer: Answer


class ChatSession:
    """The turns of one conversation, and a ``Session`` that keeps the model and index loaded."""

    def __init__(self, config: Config, generator: Generator | None = None):
        self.config = config
        self.session = Session(config)
        if generator is not None:
            self.session.use_generator(generator)
        self.generator = self.session.generator
        self.turns: list[Turn] = []
        self._searcher = None

    def retrieval_query(self, question: str) -> tuple[str, str]:
        """(what to search, earlier question for the prompt) for a new question."""
        if not self.turns or not looks_like_follow_up(question):
            return question, ""
        prev = self.turns[-1]
        # the previous *retrieval* query carries its own antecedent when it was a follow-up too,
        # capped so a long chain does not drift
        earlier = prev.retrieval_query if len(prev.retrieval_query) < 300 else prev.question
        return f"{earlier} {question}", prev.question

    @property
    def searcher(self):
        if self._searcher is None:
            from ..retrieve import Searcher

            self.generator.preload()  # first question: the model loads while the index opens
            self._searcher = Searcher(self.config, self.session.open_reader())
        return self._searcher

    def ask(self, question: str, on_token: OnToken | None = None) -> Answer:
        query, context = self.retrieval_query(question)
        result = answer(self.config, question, generator=self.generator, on_token=on_token,
                        retrieval_query=query, context=context, searcher=self.searcher)
        self.turns.append(Turn(question, query, result))
        return result

    @property
    def last(self) -> Answer | None:
        return self.turns[-1].answer if self.turns else None

    def clear(self) -> None:
        self.turns.clear()

    def close(self) -> None:
        self._searcher = None
        self.session.close()
