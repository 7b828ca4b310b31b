"""The Generator seam: what every backend takes (chat messages) and gives (a Generation).

Backends: ``generate.llama`` (llama.cpp in process) and ``generate.openai`` (any
OpenAI-compatible server), chosen by ``generate.make_generator``. Nothing here prints;
tokens reach the caller through ``on_token``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

Message = dict[str, str]
OnToken = Callable[[str], None]


class Enough(Exception):
    """Raised by an ``on_token`` callback: the caller has what it needs (or has seen the
    model go astray), so generation ends here instead of running to ``max_tokens``."""

# A small model tends to echo the prompt's layout ("Question: ...") and to loop. Stopping at
# the echo and a mild repeat penalty fix most of it (6 vault questions, SmolLM2-135M: loops
# 1/6 -> 0/6, answers citing a source 2/6 -> 4/6 with 1.2; 1.1 gave 2/6).
STOP = ["\nQuestion:", "\nSources:"]
REPEAT_PENALTY = 1.2


@dataclass
class Generation:
    """What a generator produced, with the figures the JSON contract reports."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    first_token_s: float | None  # from the generate() call to the first token
    total_s: float
    finish_reason: str | None = None


class Generator(Protocol):
    """Turns chat messages into streamed text. One per model; reusable across questions."""

    model_name: str
    n_ctx: int
    notices: list[str]  # what the user should know about this model (a fallback taken)

    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Tokens the messages take once the chat template is applied (prompt side)."""

    def generate(self, messages: Sequence[Message], *, max_tokens: int, temperature: float,
                 on_token: OnToken | None = None) -> Generation: ...

    def preload(self) -> None:
        """Start getting ready (loading weights) in the background; generate() waits for it."""

    def wait_loaded(self) -> None:
        """Block until a preload has finished (raising what it raised)."""

    def rewind(self) -> None:
        """Start the next answer from a fresh process's state (llama.cpp's cache; else nothing)."""

    def close(self) -> None: ...


class Collector:
    """What both backends do with a streamed piece: keep it, time the first, pass it on."""

    def __init__(self, on_token: OnToken | None):
        self.on_token = on_token
        self.start = time.perf_counter()
        self.first: float | None = None
        self.parts: list[str] = []
        self.stopped = False  # the callback said Enough: the backend stops reading

    def add(self, piece: str) -> None:
        if not piece or self.stopped:
            return
        if self.first is None:
            self.first = time.perf_counter() - self.start
        self.parts.append(piece)
        if self.on_token is not None:
            try:
                self.on_token(piece)
            except Enough:
                self.stopped = True

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start
