"""The indexing progress: counted in files, measured in bytes (so the time left follows the
work), and drawn as a bar on a terminal only."""

from __future__ import annotations

from pathlib import Path

from helpers import ok, on_a_terminal, rag

from ragcli.config import load_config
from ragcli.pipeline import index


def _vault(folder: Path) -> Path:
    """Notes of very different sizes: a file count says little about the work left."""
    folder.mkdir()
    for i in range(6):
        (folder / f"small {i}.md").write_text(f"# Small {i}\n\nA short note about lanterns number {i}.\n")
    body = "\n\n".join(f"## Part {j}\n\n" + f"Orchard paragraph {j} about copper kettles and rivers. " * 12
                       for j in range(12))
    (folder / "big.md").write_text("# Big\n\n" + body + "\n")
    return folder


def test_progress_counts_files_and_measures_bytes(tmp_path):
    vault = _vault(tmp_path / "vault")
    events = []
    report = index(load_config(), [vault], progress=events.append)
    assert report.files_indexed == 7
    counted = [e for e in events if e.task == "Indexing"]
    sizes = sum(p.stat().st_size for p in vault.glob("*.md"))
    assert {e.work_total for e in counted} == {sizes}
    assert [e.done for e in counted] == list(range(8))  # 0 (the start), then one event a file
    done = [e.work_done for e in counted]
    assert done == sorted(done) and done[-1] == sizes
    big = next(e for e in counted if e.item.startswith(str(vault / "big.md")))
    before = counted[counted.index(big) - 1]
    # the big note is one file of seven but most of the work
    assert big.work_done - before.work_done == (vault / "big.md").stat().st_size > sizes / 2


def test_progress_bar_on_a_terminal_only(tmp_path):
    vault = _vault(tmp_path / "vault")
    code, received = on_a_terminal(["index", vault], "stderr", {"COLUMNS": "160", "TERM": "xterm"})
    screen = received.decode("utf-8", errors="replace")
    assert code == 0, screen[-2000:]
    assert "Indexing" in screen and "/7" in screen and "eta" in screen
    (vault / "small 0.md").write_text("# Small 0\n\nChanged: lanterns and quartz.\n")
    piped = ok(rag("index", vault))
    assert b"Indexing" not in piped.stderr and b"eta" not in piped.stderr
