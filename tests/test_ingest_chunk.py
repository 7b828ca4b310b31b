"""Chunking: budgets on the embedded text, section boundaries, fences, overlap, stable ids."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragcli.ingest import Found, NoteResolver, discover, read_and_parse
from ragcli.ingest.chunk import chunk_document, chunk_id
from ragcli.types import Document, Section

from conftest import VAULT  # the path as reached (../shared may be a symlink)


def words(text: str) -> int:
    return len(text.split())


def bert_like(text: str) -> int:
    """A stand-in with [CLS]/[SEP]: every count carries 2 special tokens, like WordPiece."""
    return len(text.split()) + 2


def _doc(*sections: Section, title: str = "T") -> Document:
    return Document(path="/v/t.md", title=title, sections=list(sections))


@pytest.mark.parametrize("counter", [words, bert_like])
def test_budget_holds_on_embed_text(counter) -> None:
    prose = " ".join(f"Sentence number {i} has some words." for i in range(400))
    doc = _doc(Section(("T", "Long"), prose, 1, 1))
    chunks = chunk_document(doc, counter, 50, 8)
    assert len(chunks) > 10
    assert all(counter(c.embed_text()) <= 50 for c in chunks)
    assert all(c.heading == "T > Long" and c.line_start == c.line_end == 1 for c in chunks)


def test_sections_never_mix_and_empty_sections_vanish() -> None:
    doc = _doc(Section(("T",), "intro text", 1, 1), Section(("T", "A"), "\n  \n", 2, 3),
               Section(("T", "B"), "\nbee text\n", 4, 6))
    chunks = chunk_document(doc, words, 200, 16)
    assert [(c.heading, c.text, c.line_start, c.line_end) for c in chunks] == [
        ("T", "intro text", 1, 1), ("T > B", "bee text", 5, 5)]
    assert [c.ordinal for c in chunks] == [0, 1]


def test_paragraph_lines_and_overlap() -> None:
    paras = [f"para{i} " + "word " * 30 for i in range(6)]
    text = "\n\n".join(paras)  # paragraph i sits on line 10 + 2*i
    doc = _doc(Section(("T", "S"), text, 10, 20))
    chunks = chunk_document(doc, words, 80, 10)
    assert len(chunks) >= 3
    assert chunks[0].line_start == 10 and chunks[-1].line_end == 20
    for prev, nxt in zip(chunks, chunks[1:]):
        tail = " ".join(prev.text.split()[-5:])
        assert tail in nxt.text  # consecutive pieces share the previous tail
        assert nxt.line_start >= prev.line_start


def test_code_fence_stays_whole_unless_too_big() -> None:
    fence = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(20)) + "\n```"
    text = "before " * 30 + "\n\n" + fence + "\n\nafter"
    chunks = chunk_document(_doc(Section(("T",), text, 1, 26)), words, 100, 8)
    assert any(fence in c.text for c in chunks)
    big = "```\n" + "\n".join(f"line {i} of code" for i in range(300)) + "\n```"
    chunks = chunk_document(_doc(Section(("T",), big, 1, 302)), words, 60, 0)
    assert len(chunks) > 5 and all(words(c.embed_text()) <= 60 for c in chunks)
    assert "line 0 of code\nline 1 of code" in chunks[0].text  # cut at lines, newlines kept


def test_giant_word_and_unsplittable_text() -> None:
    blob = "A" * 200_000
    chunks = chunk_document(_doc(Section(("T",), blob, 1, 1)), lambda s: len(s) // 4 + 1, 100, 0)
    assert "".join(c.text for c in chunks) == blob


def test_ids_are_stable_and_distinct_for_repeats() -> None:
    doc = _doc(Section(("T", "S"), "same text", 1, 1), Section(("T", "S"), "same text", 3, 3))
    a = chunk_document(doc, words, 100, 0)
    b = chunk_document(doc, words, 100, 0)
    assert [c.id for c in a] == [c.id for c in b]
    assert a[0].id != a[1].id and len(a[0].id) == 32
    assert a[0].id == chunk_id("/v/t.md", "T > S", "same text", 0)


def test_pdf_pages_carry_through() -> None:
    doc = _doc(Section(("P",), "page one", 1, 1, page=1), Section(("P",), "page\ntwo", 1, 2, page=2),
               title="P")
    assert [(c.page, c.line_end) for c in chunk_document(doc, words, 100, 0)] == [(1, 1), (2, 2)]


def test_ten_megabyte_note_chunks_with_linear_token_calls(tmp_path: Path) -> None:
    para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit sed do eiusmod.\n\n"
    path = tmp_path / "huge.md"
    path.write_text("".join(f"## H{i}\n\n" + para * 40 for i in range(4000)))
    doc = read_and_parse(path, 50 << 20)
    calls = 0

    def counting(text: str) -> int:
        nonlocal calls
        calls += 1
        return len(text.split())

    chunks = chunk_document(doc, counting, 200, 32)
    assert len(chunks) >= 4000
    assert calls < 60 * len(chunks)  # per paragraph and per chunk, never per pair


@pytest.mark.skipif(not VAULT.is_dir(), reason="../shared/corpora is not present")
def test_vault_chunks_point_at_real_lines() -> None:
    found = [f.path for f in discover([VAULT]) if isinstance(f, Found)]
    resolver = NoteResolver.from_paths(found, [VAULT])
    for path in found:
        doc = read_and_parse(path, 50 << 20, resolver)
        lines = path.read_text(encoding="utf-8").split("\n")
        for c in chunk_document(doc, words, 200, 32):
            assert 1 <= c.line_start <= c.line_end <= len(lines)
            assert words(c.embed_text()) <= 200


@pytest.mark.parametrize("counter", [words, bert_like])
def test_a_long_list_is_cut_between_its_items(counter) -> None:
    """A list longer than a chunk is cut before an item, each item with its nested line, the
    lines kept: cut into sentences, it was joined back as one line of ' - ' runs."""
    items = [f"- Plugin {i}\n\t- Does thing number {i} for the notes in your vault." for i in range(40)]
    text = "\n".join(items)
    doc = _doc(Section(("T", "All plugins"), text, 10, 10 + text.count("\n")))
    chunks = chunk_document(doc, counter, 60, 12)
    assert len(chunks) > 3
    file_lines = text.split("\n")
    for c in chunks:
        assert c.text.startswith("- Plugin "), c.text[:40]
        assert " - Does" not in c.text  # never flattened
        assert c.text.split("\n")[0] == file_lines[c.line_start - 10]  # its first line is where it says
        assert all(line in file_lines for line in c.text.split("\n"))
    assert all(f"- Plugin {i}" in "\n".join(c.text for c in chunks) for i in range(40))


def test_long_table_is_cut_between_rows_and_keeps_its_lines() -> None:
    rows = ["| Key | What |", "|---|---|"] + [f"| key{i} | does thing number {i} here |" for i in range(40)]
    text = "Shortcuts:\n\n" + "\n".join(rows)  # the table starts on line 3 of the section
    chunks = chunk_document(_doc(Section(("T", "Keys"), text, 1, 44)), words, 60, 8)
    assert len(chunks) > 2
    seen = set()
    for c in chunks:
        lines = c.text.split("\n")
        for k, line in enumerate(lines):
            if line.startswith("| key"):  # each row on its own line, on its file line
                assert line == rows[c.line_start + k - 3], (c.line_start, k, line)
                seen.add(line)
    assert seen == set(rows[2:])


def test_a_long_wrapped_paragraph_keeps_its_line_breaks() -> None:
    lines = [f"Line {i} says one short thing. And then another thing." for i in range(30)]
    chunks = chunk_document(_doc(Section(("T",), "\n".join(lines), 5, 34)), words, 60, 0)
    assert len(chunks) > 2
    for c in chunks:
        for k, line in enumerate(c.text.split("\n")):
            assert line in lines[c.line_start + k - 5]  # a chunk may open or end between sentences


@pytest.mark.parametrize("counter", [words, bert_like])
def test_a_list_after_a_lead_line_is_cut_between_its_items(counter) -> None:
    """A PDF page's table rows follow a lead line ("Table rows:") in the same paragraph: they
    are cut between rows too, never into sentences at each "; " and joined back as one line
    (the evidence then read five rows as one run-on sentence, and a chunk opened mid-row)."""
    rows = [f"- Service {i} (S{i}) — Requirements Tested Passed: {i}; Requirements Tested Failed: 0; "
            f"Total Tested: {i}; Deferred: 0; Total: {i}" for i in range(12)]
    before = [f"- item {i} of the list before" for i in range(12)]
    text = "\n".join(before) + "\n\nTable rows:\n" + "\n".join(rows)
    doc = _doc(Section(("T", "Page"), text, 1, 1 + text.count("\n")))
    chunks = chunk_document(doc, counter, 60, 12)
    body = [c for c in chunks if "Service" in c.text]
    assert len(body) > 2
    for c in body:
        lines = c.text.split("\n")
        assert all(line in ("", "Table rows:") or line in rows or line in before for line in lines), c.text[:80]
    assert "Table rows:\n- Service 0 " in body[0].text
    # the lead line stays a paragraph of its own after the list before it, in the overlap too
    # (joined to it by one newline it is that list's last item, continued)
    assert all("before\nTable rows:" not in c.text for c in chunks)


@pytest.mark.parametrize("budget", [200, 40])
def test_counts_that_add_up_cut_the_same_chunks_without_a_second_count(budget) -> None:
    """The real MiniLM vocabulary (WordPiece) adds up at whitespace: skipping the count of
    each finished piece changes no chunk, and no chunk is over the budget."""
    from ragcli.config import load_config
    from ragcli.embed import make_embedder

    embedder = make_embedder(load_config())
    try:
        assert embedder.counts_add_up
        notes = sorted((Path(__file__).parents[1] / "examples" / "vault").rglob("*.md"))
        docs = [read_and_parse(p, 1 << 20) for p in notes]
        counted = [chunk_document(d, embedder.count_tokens, budget, 8) for d in docs]
        summed = [chunk_document(d, embedder.count_tokens, budget, 8, adds_up=True) for d in docs]
        assert summed == counted and sum(map(len, counted)) > len(docs)
        assert all(embedder.count_tokens(c.embed_text()) <= budget for cs in summed for c in cs)
    finally:
        embedder.close()


def test_each_line_of_a_chunk_is_the_files_line() -> None:
    """A rule ("---"), blank lines or a fence right after its lead-in sat between paragraphs as one
    blank line, so every line after it was cited lines off: Callouts' "Aliases: `caution`,
    `attention`" as line 208, where the file has it at 210."""
    text = ("Aliases: `help`, `faq`\n\n---\n\n> Warning text here\n\nTo embed a note:\n```md\n"
            "![[Internal links]]\n```\n\n\nAliases: `caution`")
    doc = _doc(Section(("T", "Types"), text, 200, 200 + text.count("\n")))
    (chunk,) = chunk_document(doc, words, 200, 0)
    file_lines = text.split("\n")
    assert chunk.line_end == 200 + len(file_lines) - 1
    for k, line in enumerate(chunk.text.split("\n")):  # the rule, which has no word, is no line of text
        assert line == file_lines[chunk.line_start - 200 + k] or not line and file_lines[k] == "---", (k, line)


def test_vault_chunk_lines_stand_where_the_file_has_them() -> None:
    found = [f.path for f in discover([VAULT]) if isinstance(f, Found)]
    resolver = NoteResolver.from_paths(found, [VAULT])
    misplaced = []
    for path in found:
        doc = read_and_parse(path, 50 << 20, resolver)
        lines = path.read_text(encoding="utf-8").split("\n")
        for c in chunk_document(doc, words, 200, 0):
            if c.line_start == c.line_end:  # an embed: its note's lines stand on the embed's line
                continue
            for k, line in enumerate(c.text.split("\n")[1:], 1):
                said = set(re.findall(r"[a-z0-9]{3,}", line.lower()))
                held = set(re.findall(r"[a-z0-9]{3,}", lines[c.line_start + k - 1].lower()))
                if len(said) >= 2 and len(said & held) < len(said) / 2:
                    misplaced.append((path.name, c.line_start + k, line[:40]))
    assert not misplaced, misplaced[:5]
