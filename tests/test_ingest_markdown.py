"""Markdown and Obsidian parsing on real files: metadata, sections, embeds, encodings, hostile input."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from ragcli.config import load_config
from ragcli.ingest import NoteResolver, ParseError, Parser, discover, Found, read_and_parse
from ragcli.ingest.frontmatter import split_front_matter
from ragcli.ingest.markdown import parse_markdown

from conftest import VAULT  # the path as reached (../shared may be a symlink)
needs_vault = pytest.mark.skipif(not VAULT.is_dir(), reason="../shared/corpora is not present")

NOTE = """---
title: "Garden plan"
aliases: [Plan, "Spring plan"]
tags:
  - garden
  - Outdoor/Beds
date: 2024-03-01
nested:
  key: value
---
Intro with #inline-tag and a [[Seeds|seed list]] and [[Tools#Spades]].
Not a tag: https://example.com/page#frag and `#code` and #1984.

# Beds

> [!warning] Frost
> Cover the beds in April.

## Tomatoes

%% private comment %%
<!-- html comment -->
Water daily. ^tomato-block

```python
# not a heading
x = "[[not a link]] #notatag"
```

# Paths
Last line.
"""


def _parse(tmp_path: Path, text: str, name: str = "Garden.md", resolver=None):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_and_parse(path, 50 << 20, resolver)


def test_front_matter_and_obsidian_syntax(tmp_path: Path) -> None:
    doc = _parse(tmp_path, NOTE)
    assert doc.title == "Garden plan"
    assert doc.aliases == ("Plan", "Spring plan")
    assert doc.date == "2024-03-01"
    assert set(doc.tags) == {"garden", "outdoor/beds", "inline-tag"}
    assert set(doc.links) == {"Seeds", "Tools"}
    intro, beds, tomatoes, paths = doc.sections
    assert intro.heading_path == ("Garden plan",)
    assert (intro.line_start, intro.line_end) == (11, 13)  # front matter lines count
    assert "seed list" in intro.text and "Tools > Spades" in intro.text and "[[" not in intro.text
    assert beds.heading_path == ("Garden plan", "Beds")
    assert "Frost" in beds.text and "Cover the beds" in beds.text and "[!warning]" not in beds.text
    assert tomatoes.heading_path == ("Garden plan", "Beds", "Tomatoes")
    assert "private comment" not in tomatoes.text and "html comment" not in tomatoes.text
    assert "^tomato-block" not in tomatoes.text
    assert '"[[not a link]] #notatag"' in tomatoes.text  # code stays verbatim
    assert paths.heading_path == ("Garden plan", "Paths")
    assert paths.line_end == NOTE.count("\n") + 1
    lines = NOTE.split("\n")
    for sec in doc.sections:  # every section maps line for line onto the file
        assert sec.text.count("\n") == sec.line_end - sec.line_start
    assert lines[tomatoes.line_start - 1] == "## Tomatoes"


def test_title_falls_back_to_file_stem_not_h1(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "# Some heading\n\ntext\n", name="My Note.md")
    assert doc.title == "My Note"
    assert doc.sections[0].heading_path == ("My Note", "Some heading")


@pytest.mark.parametrize("front", [
    "---\n: broken\n- stray\n  : x\n[[[\n---\nbody\n",
    "---\ntitle: [unclosed\ntags: 'a\n---\nbody\n",
    "---\nno end marker\nbody\n",
    "---\n---\nbody\n",
])
def test_odd_front_matter_never_raises(tmp_path: Path, front: str) -> None:
    doc = _parse(tmp_path, front)
    assert "body" in " ".join(s.text for s in doc.sections)


def test_front_matter_reader_subset() -> None:
    meta, n = split_front_matter("---\na: 1 # c\nb: 'x: y'\nc: [p, 'q, r']\nd:\n- e\n- f\n---\n")
    assert n == 8
    assert meta == {"a": "1", "b": "x: y", "c": ["p", "q, r"], "d": ["e", "f"]}


def _embed_vault(tmp_path: Path) -> tuple[Path, NoteResolver]:
    root = tmp_path / "v"
    (root / "sub").mkdir(parents=True)
    (root / "Host.md").write_text("# Top\n\nSee below.\n\n![[Guest]]\n\n## Part\n\n![[sub/Other#Deep]]\n"
                                  "![[Host]]\n![[photo.png|100]]\n![[Guest#^blk]]\n")
    (root / "sub" / "Guest.md").write_text("Guest intro about zebras.\n\nA quoted block. ^blk\n\n![[Host]]\n")
    (root / "sub" / "Other.md").write_text("# Shallow\nskip me\n# Deep\nunicorn facts\n## Deeper\nmore unicorns\n")
    paths = [f.path for f in discover([root]) if isinstance(f, Found)]
    return root, NoteResolver.from_paths(paths, [root])


def test_embeds_are_resolved_depth_limited_and_cycle_safe(tmp_path: Path) -> None:
    root, resolver = _embed_vault(tmp_path)
    assert resolver.resolve("guest") == root / "sub" / "Guest.md"
    assert resolver.resolve("sub/Other") == root / "sub" / "Other.md"
    assert resolver.resolve("Missing") is None
    doc = read_and_parse(root / "Host.md", 1 << 20, resolver)
    text = {s.heading_path: s for s in doc.sections}
    guest = text[("Host", "Top", "Guest")]
    assert "zebras" in guest.text and guest.line_start == guest.line_end == 5
    deep = text[("Host", "Top", "Part", "Other > Deep")]
    assert "unicorn facts" in deep.text and "more unicorns" in deep.text and "skip me" not in deep.text
    assert text[("Host", "Top", "Part", "Guest")].text.strip() == "A quoted block."
    assert set(doc.embeds) == {str(root / "sub" / "Guest.md"), str(root / "sub" / "Other.md"),
                               str(root / "Host.md")}
    assert "photo.png" in text[("Host", "Top", "Part")].text


def test_inline_code_and_urls_are_not_tags(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "a `#x` b http://h/p#frag c [l](#anchor) #real/nested d&#39; #2024\n")
    assert doc.tags == ("real/nested",)


# ---------------------------------------------------------------- encodings and hostile input


def test_encodings(tmp_path: Path) -> None:
    (tmp_path / "bom.md").write_bytes("\ufeff# Café\n\nnaïve\n".encode("utf-8"))
    (tmp_path / "latin.md").write_bytes("# Café\n\nnaïve crème brûlée\n".encode("latin-1"))
    (tmp_path / "utf16.md").write_bytes("# Café\n\nnaïve\n".encode("utf-16"))
    bom = read_and_parse(tmp_path / "bom.md", 1 << 20)
    assert bom.warnings == [] and bom.sections[0].heading_path == ("bom", "Café")
    latin = read_and_parse(tmp_path / "latin.md", 1 << 20)
    assert "Latin-1" in latin.warnings[0] and "crème brûlée" in latin.sections[0].text
    utf16 = read_and_parse(tmp_path / "utf16.md", 1 << 20)
    assert "UTF-16" in utf16.warnings[0] and "naïve" in utf16.sections[0].text


def test_random_bytes_named_md_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "junk.md").write_bytes(os.urandom(50_000))
    with pytest.raises(ParseError, match="binary"):
        read_and_parse(tmp_path / "junk.md", 1 << 20)
    (tmp_path / "nul.md").write_bytes(b"# ok\n\x00\x00\x00text")
    with pytest.raises(ParseError, match="NUL"):
        read_and_parse(tmp_path / "nul.md", 1 << 20)


@pytest.mark.parametrize("text", [
    "[" * 50000,
    "[[" * 30000,
    ">" * 50000 + " deep quote",
    "".join("  " * i + "- item\n" for i in range(2000)),
    "*a" * 50000,
    "<!--" * 30000,
    "%%" + "x" * 100000,
    "![[" * 20000 + "]]" * 20000,
    "#" * 100000,
    "```\n" + "code\n" * 10000,
])
def test_pathological_markdown_parses(tmp_path: Path, text: str) -> None:
    doc = _parse(tmp_path, text)
    assert doc.sections


def test_ten_megabyte_note_goes_through_worker(tmp_path: Path) -> None:
    para = "Lorem ipsum dolor sit amet [[Link]] #tag, consectetur adipiscing elit.\n\n"
    body = "".join(f"## Heading {i}\n\n" + para * 20 for i in range(8000))
    path = tmp_path / "huge.md"
    path.write_text(body)
    assert path.stat().st_size > 10 * 1024 * 1024
    config = load_config()
    with Parser(config) as parser:
        doc = parser.parse(path)
        assert parser.worker.started == 1  # over WORKER_MIN_BYTES: parsed under the limits
    assert len(doc.sections) == 8000 and doc.tags == ("tag",)
    assert doc.sections[-1].line_end == body.count("\n") + 1


def test_max_file_mb_is_enforced(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_text("x " * 700_000)
    config = dataclasses.replace(load_config(), max_file_mb=1)
    with Parser(config) as parser, pytest.raises(ParseError, match="too large.*max_file_mb"):
        parser.parse(path)


# ---------------------------------------------------------------- the real vault


@needs_vault
def test_whole_obsidian_help_vault_parses() -> None:
    found = [f.path for f in discover([VAULT]) if isinstance(f, Found)]
    resolver = NoteResolver.from_paths(found, [VAULT])
    started = time.perf_counter()
    with Parser(load_config()) as parser:
        docs = [parser.parse(p, resolver) for p in found]
        assert parser.worker.started == 0  # notes this size never need the worker
    print(f"\nvault: {len(docs)} notes parsed in {time.perf_counter() - started:.2f}s")
    assert len(docs) == 173 and all(d.sections for d in docs)
    embed = next(d for d in docs if d.path.endswith("Linking notes and files/Embed files.md"))
    headings = [s.heading_path for s in embed.sections]
    assert ("Embed files", "Embed a note in another note") in headings
    assert ("Embed files", "Embed a PDF in a note") in headings
    assert embed.aliases == ("How to/Embed files", "Linking notes and files/Embedding files")
    block = next(s for s in embed.sections if s.heading_path[-1] == "Internal links")
    assert "network of knowledge" in block.text  # ![[Internal links#^b15695]] resolved
    assert str(VAULT / "Linking notes and files" / "Internal links.md") in embed.embeds


def test_an_h1_repeating_the_title_is_not_repeated_in_the_heading_path(tmp_path):
    note = tmp_path / "Pour over.md"
    note.write_text("# Pour over\n\nMy recipe.\n\n## Steps\n\nBloom for 45 seconds.\n")
    doc = parse_markdown(note.read_text(), note)
    assert [s.heading_path for s in doc.sections if s.text.strip()] == [("Pour over",), ("Pour over", "Steps")]
