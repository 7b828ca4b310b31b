"""The nouns of the pipeline: what each stage takes and returns.

Stage functions are verbs (discover, parse, chunk, embed, retrieve, generate) over these.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Self


@dataclass(frozen=True)
class Section:
    """A run of text under one heading (or one PDF page), with where it came from."""

    heading_path: tuple[str, ...]  # ("Note", "Section", "Sub"); may be empty
    text: str
    line_start: int  # 1-based, inclusive; for PDFs the line within the page's text
    line_end: int
    page: int | None = None  # 1-based PDF page, None for notes


@dataclass
class Document:
    """One parsed file."""

    path: str  # absolute path
    title: str
    sections: list[Section]
    tags: tuple[str, ...] = ()  # front matter + inline, without '#', lower-cased
    aliases: tuple[str, ...] = ()
    date: str | None = None  # ISO date from front matter (date/created/updated), if any
    links: tuple[str, ...] = ()  # wikilink targets, for reference
    embeds: tuple[str, ...] = ()  # absolute paths of notes embedded (![[...]]), for re-indexing
    warnings: list[str] = field(default_factory=list)  # e.g. "read as Latin-1"
    sha256: str = ""  # of the exact bytes parsed (set by ingest.read)


@dataclass(frozen=True)
class Chunk:
    """A piece of a document sized for the embedding model."""

    id: str  # stable, derived from path + content (see ingest.chunk.chunk_id)
    path: str
    title: str
    heading: str  # heading path joined with " > "
    text: str
    line_start: int
    line_end: int
    page: int | None = None
    ordinal: int = 0  # position within the document

    def embed_text(self) -> str:
        """What the embedding model sees: title and heading path give the text its context."""
        head = self.title if not self.heading or self.heading == self.title else self.heading
        if self.title and not head.startswith(self.title):
            head = f"{self.title} > {head}"
        return f"{head}\n{self.text}" if head else self.text


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk with its score and rank."""

    chunk: Chunk
    score: float
    rank: int = 0
    vector_score: float | None = None  # cosine similarity, when the vector side saw it
    keyword_score: float | None = None  # bm25 (higher is better), when the keyword side saw it

    def to_json(self) -> dict[str, Any]:
        c = self.chunk
        return {"rank": self.rank, "id": c.id, "path": c.path, "title": c.title, "heading": c.heading,
                "line_start": c.line_start, "line_end": c.line_end, "page": c.page, "ordinal": c.ordinal,
                "score": self.score, "vector_score": self.vector_score,
                "keyword_score": self.keyword_score, "text": c.text}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Hit:
        chunk = Chunk(d["id"], d["path"], d["title"], d["heading"], d["text"], d["line_start"],
                      d["line_end"], d["page"], d["ordinal"])
        return cls(chunk, d["score"], d["rank"], d["vector_score"], d["keyword_score"])


@dataclass
class FileFailure:
    path: str
    reason: str


class _Scored:
    """JSON for a numbered quote or source: its fields as they are, the score rounded."""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "score": round(self.score, 4)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Self:
        return cls(**{f.name: d[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class Quote(_Scored):
    """A numbered piece of evidence, as shown to the user and given to the model."""

    n: int
    text: str
    kind: str
    path: str
    title: str
    heading: str
    line_start: int
    line_end: int
    page: int | None
    score: float
    context: str = ""


@dataclass
class Source(_Scored):
    """A numbered source as listed after the answer and in the JSON contract."""

    n: int
    path: str
    title: str
    heading: str
    line_start: int
    line_end: int
    page: int | None
    score: float


@dataclass
class Answer:
    question: str
    text: str
    sources: list[Source]  # empty when the notes do not cover the question
    model: str
    # from the call: retrieve_s, quotes_s, first_token_s (the first sentence shown),
    # model_first_token_s (the model's, shown or not), total_s
    timings: dict[str, float | None]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    covered: bool = True
    cited: list[int] = field(default_factory=list)  # source numbers the answer cites
    retrieval_query: str = ""
    quotes: list[Quote] = field(default_factory=list)  # the evidence, numbered like the sources
    dropped: list[dict] = field(default_factory=list)  # generated sentences that failed a check, and why
    generated: str = ""  # what the model wrote, before the checks
    quoted_fallback: bool = False  # no generated sentence held: the answer is the best quotes
    checked: bool = True  # every sentence shown passed the checks (False: quotes only, no generation)
    notices: list[str] = field(default_factory=list)  # e.g. the preferred model could not be used
    stopped: str = ""  # why generation was cut short by the checks ("" = it ran to its end)
    parts: list[str] = field(default_factory=list)  # the parts of a question that asks several things
    missing_parts: list[str] = field(default_factory=list)  # parts no note answers
    tentative: bool = False  # the evidence is weak: the passages may answer it, none says so plainly
    not_mentioned: list[str] = field(default_factory=list)  # names and words of the question that no note holds
    not_found: list[str] = field(default_factory=list)  # names a note holds, but no passage found for it
    nearest: list[str] = field(default_factory=list)  # not covered: the notes search found nearest, to look at

    def to_json(self) -> dict[str, Any]:
        """The one JSON shape of an answer: what `--json`, MCP and the watcher's socket send
        (the socket's client rebuilds the Answer from it with ``from_json``)."""
        return {"question": self.question, "answer": self.text, "covered": self.covered,
                "sources": [s.to_json() for s in self.sources], "model": self.model,
                "timings": {k: (round(v, 3) if isinstance(v, float) else v)
                            for k, v in self.timings.items()},
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cited": self.cited, "quotes": [q.to_json() for q in self.quotes], "dropped": self.dropped,
                "generated": self.generated, "quoted_fallback": self.quoted_fallback, "checked": self.checked,
                "retrieval_query": self.retrieval_query, "notices": self.notices, "stopped": self.stopped,
                "parts": self.parts, "missing_parts": self.missing_parts, "tentative": self.tentative,
                "not_mentioned": self.not_mentioned, "not_found": self.not_found, "nearest": self.nearest}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Answer:
        plain = {f.name: d[f.name] for f in fields(cls)
                 if f.name in d and f.name not in ("question", "text", "sources", "quotes")}
        return cls(d["question"], d["answer"], [Source.from_json(s) for s in d["sources"]],
                   quotes=[Quote.from_json(q) for q in d["quotes"]], **plain)
