"""A note quoted under two headings prints its path once: the heading is what changes, and the
path again would be words that carry nothing (issue 19, "fewer words to read")."""

from __future__ import annotations

from ragcli import render
from ragcli.types import Quote


def test_a_note_quoted_under_two_headings_prints_its_path_once(capsys):
    path = "/v/Obsidian Sync/Plans and storage limits.md"
    quotes = [Quote(1, "Total storage | 1 GB | 10 GB to 100 GB", "row", path, "Plans and storage limits",
                    "Plans and storage limits > Plans", 22, 22, None, 0.6),
              Quote(2, "On the Sync Plus plan you can purchase additional storage up to 100 GB.", "sentence", path,
                    "Plans and storage limits", "Plans and storage limits > Storage limits", 29, 29, None, 0.5),
              Quote(3, "For the Standard plan the limit is 5 MB.", "sentence", "/v/Obsidian Sync/FAQ.md", "FAQ",
                    "FAQ > Files", 51, 51, None, 0.5)]
    render.reset_consoles()
    render.print_quotes(quotes)
    out = capsys.readouterr().out
    render.reset_consoles()
    lines = out.splitlines()
    assert out.count("Plans and storage limits.md") == 1
    assert lines[0].endswith("Plans and storage limits.md › Plans")
    assert lines[2] == " › Storage limits"  # under the path above, before its quote
    assert lines[3].startswith("  [2] line 29:")
    assert any(line.endswith("FAQ.md › Files") for line in lines)  # another note: its own path
