"""Files -> Documents: discover, parse (Markdown, Obsidian, PDF) and chunk.

Public API::

    with Parser(config) as parser:          # owns the parsing worker process
        doc = parser.parse(path, resolver)   # -> Document (with .sha256), or raises ParseError(reason)

    NoteResolver.from_paths(paths, roots).resolve("Note name") -> Path | None
    discover(roots, exclude) / classify(path, roots, exclude)   (see discover.py)
    chunk_document(doc, count_tokens, max_tokens, overlap)      (see chunk.py)

Where to add a file type: a ``parse_<kind>(path, data) -> Document`` module beside
``markdown.py`` and ``pdf.py``, its suffixes in ``discover.py``, its dispatch in ``read.py``.
"""

from __future__ import annotations

from .discover import Found, Skipped, classify, discover
from .errors import ParseError
from .obsidian import NoteResolver
from .parse import WORKER_MIN_BYTES, Parser
from .read import read_and_parse

__all__ = ["ParseError", "Parser", "NoteResolver", "discover", "classify", "Found", "Skipped",
           "read_and_parse", "WORKER_MIN_BYTES"]
