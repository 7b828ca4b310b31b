"""Quotes are the note's own text: the words a chunk repeats from the chunk before it (the
chunker's overlap, joined by spaces across code fences and lists) are read from that chunk,
as the note has them, with their lines (``retrieve.tails``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragcli.ingest.chunk import chunk_document
from ragcli.ingest.markdown import parse_markdown
from ragcli.retrieve.evidence import split_units
from ragcli.retrieve.tails import tail_length, untailed
from ragcli.types import Chunk, Hit

from conftest import VAULT


def words(text: str) -> int:
    return len(text.split())


def _note_lines(doc) -> set[str]:
    return {line.strip() for section in doc.sections for line in section.text.split("\n")}


def _strange_lines(chunk: Chunk, lines: set[str]) -> list[str]:
    return [line for line in chunk.text.split("\n") if line.strip() not in lines]


FORMATTING = """# Formatting

Formatting can be forced to display in plain text by adding a backslash in front of it.

The backslash itself is not shown in Reading view, and the characters after it are shown as typed.

\\*\\*This line will not be bold\\*\\*

```markdown
\\*\\*This line will not be bold\\*\\*
```

\\**This line will be italic and show the asterisks*\\*

```markdown
\\**This line will be italic and show the asterisks*\\*
```

Escaping works for underscores, hashes and backticks too, wherever they would start formatting.
"""


def test_a_tail_across_a_code_fence_is_read_as_the_note_has_it(tmp_path: Path) -> None:
    note = tmp_path / "Formatting.md"
    note.write_text(FORMATTING, encoding="utf-8")
    doc = parse_markdown(note.read_text(encoding="utf-8"), note)
    chunks = chunk_document(doc, words, 40, 12)
    lines = _note_lines(doc)
    torn = [c for c in chunks if _strange_lines(c, lines)]
    assert torn, "the chunker no longer joins a tail across a fence: this test checks nothing"
    read = untailed(chunks)
    assert [c.id for c in read] == [c.id for c in chunks]
    file_lines = note.read_text(encoding="utf-8").split("\n")
    for chunk in read:
        assert not _strange_lines(chunk, lines), chunk.text
        for unit in split_units(Hit(chunk, 1.0, 1)):
            first = unit.text.split("\n")[0]
            assert first.strip() in file_lines[unit.line_start - 1], (unit.line_start, unit.text)
    code = [u for c in read for u in split_units(Hit(c, 1.0, 1)) if u.kind == "code"]
    assert {u.text for u in code} == {"\\*\\*This line will not be bold\\*\\*",
                                      "\\**This line will be italic and show the asterisks*\\*"}


def test_whole_lines_a_chunk_repeats_are_the_notes_own() -> None:
    """A list's or a table's next piece opens with the last items or rows whole: kept as they are.
    A row opens and ends with "|": one word alike is no tail."""
    assert tail_length("Parts:\n- a drip line\n- a pressure regulator", "- a pressure regulator\n- a timer") == 0
    assert tail_length("| a | 1 |\n| b | 2 |", "| b | 2 |\n| c | 3 |") == 0
    assert tail_length("| a | 1 |", "| c | 3 |") == 0
    prose = "The starter doubles in six hours\nat room temperature."
    assert tail_length(prose, "six hours at room temperature. Feed it again") == len("six hours at room temperature.")
    assert tail_length(prose, "temperature. Feed it again") == 0


def test_a_pdf_page_is_read_as_it_is() -> None:
    """A page's lines are where its layout broke the text: its tails are running prose."""
    first = Chunk("a", "/r.pdf", "R", "R", "The due date is April 17, instead of April 15, because", 1, 1, 3, 0)
    second = Chunk("b", "/r.pdf", "R", "R", "instead of April 15, because April 15 falls on a Sunday.", 1, 2, 3, 1)
    assert untailed([first, second]) == [first, second]


@pytest.mark.skipif(not VAULT.is_dir(), reason="../shared/corpora is not present")
def test_every_chunk_of_the_help_vault_is_read_as_its_note_has_it() -> None:
    torn = 0
    for path in sorted(VAULT.rglob("*.md")):
        doc = parse_markdown(path.read_text(encoding="utf-8"), path)
        lines = _note_lines(doc)
        chunks = chunk_document(doc, words, 200, 32)
        torn += sum(1 for c in chunks if _strange_lines(c, lines))
        for chunk in untailed(chunks):
            assert not _strange_lines(chunk, lines), (path.name, chunk.line_start, chunk.text[:200])
    assert torn > 20, "no chunk of the help vault opens with a torn tail: this test checks nothing"


def _normal(text: str) -> str:
    text = re.sub(r"!?\[\[([^\]|]*)\|([^\]]*)\]\]", r"\2", text)
    text = re.sub(r"!?\[\[([^\]]*?)(?:#icon)?\]\]", r"\1", text)
    return re.sub(r"[^0-9a-z]", "", text.lower())


QUESTIONS = [  # each had a quote on main that opened with a torn tail
    "Why does the markdown hide my asterisks until I click on that line?",
    "How do I make a link show different words than the note's name?",
    "My note is really long; is there a way to see all its headings and jump between them?",
]


def test_every_quote_is_its_notes_text_at_its_lines(help_vault_env, monkeypatch) -> None:
    from ragcli.config import load_config
    from ragcli.pipeline.answer import answer

    for key, value in help_vault_env.items():
        monkeypatch.setenv(key, value)
    config = load_config()
    for question in QUESTIONS:
        result = answer(config, question, quotes_only=True)
        for quote in result.quotes:
            if quote.kind in ("row", "block", "steps", "code"):  # fences and headers are left out
                continue
            lines = Path(quote.path).read_text(encoding="utf-8").split("\n")
            where = "\n".join(lines[quote.line_start - 1:quote.line_end])
            assert _normal(quote.text) in _normal(where), (question, quote.line_start, quote.text)


def test_search_shows_each_passage_as_its_note_has_it(help_vault_env, monkeypatch, capsys) -> None:
    """`rag search --json` (and so MCP's search, through the same library call): a passage that
    opened with a torn tail ("will not be bold\\*\\* ```markdown ...") is the note's lines."""
    import json

    from ragcli.cli import main

    for key, value in help_vault_env.items():
        monkeypatch.setenv(key, value)
    assert main(["search", QUESTIONS[0], "-k", "5", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    checked = 0
    for hit in results:
        lines = Path(hit["path"]).read_text(encoding="utf-8").split("\n")
        # the passage's first line is the note's, at the line it claims (links and callouts as parsed)
        first = hit["text"].split("\n")[0]
        at = "\n".join(lines[hit["line_start"] - 1:hit["line_start"] + 1])
        assert _normal(first) and _normal(first) in _normal(at), (hit["line_start"], first)
        checked += 1
    assert checked == len(results) > 0
