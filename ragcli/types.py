"""The nouns of the pipeline: what each stage takes and returns.

Stage functions are verbs (discover, parse, chunk, embed, retrieve, generate) over these.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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


@dataclass
class FileFailure:
    path: str
    reason: str
