"""discover/classify on real folders: ignore rules, symlinks, special files, determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragcli.ingest.discover import Found, Skipped, classify, discover, parse_ignore, is_ignored

from conftest import VAULT  # the path as reached (../shared may be a symlink)
from helpers import rag_env, unprivileged


def _write(path: Path, text: str = "# note\n\nbody\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _rel(items, root: Path, kind=Found) -> list[str]:
    return [str(i.path.relative_to(root)) for i in items if isinstance(i, kind)]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for name in ("b.md", "a.MD", "c.markdown", "doc.PDF", "notes.txt", "img.png", "sub/z.md",
                 "sub/deeper/y.md", ".obsidian/workspace.md", ".trash/old.md", ".git/x.md",
                 ".hidden.md", "sub/.secret/s.md", "drafts/d.md", "sub/drafts/d2.md", "keep/k.pdf",
                 "keep/private.pdf", "index/store.md"):
        _write(root / name)
    return root


def test_candidates_sorted_and_default_ignores(vault: Path) -> None:
    items = list(discover([vault], exclude=[vault / "index"]))
    assert _rel(items, vault) == ["a.MD", "b.md", "c.markdown", "doc.PDF", "drafts/d.md", "keep/k.pdf",
                                  "keep/private.pdf", "notes.txt", "sub/deeper/y.md", "sub/drafts/d2.md",
                                  "sub/z.md"]
    assert not [i for i in items if isinstance(i, Skipped)]
    found = [i for i in items if isinstance(i, Found)]
    assert all(f.path.is_absolute() and f.root == vault and f.size > 0 and f.mtime_ns > 0 for f in found)
    assert items == list(discover([vault], exclude=[vault / "index"]))  # deterministic


def test_ragignore_patterns(vault: Path) -> None:
    (vault / ".ragignore").write_text("# comment\ndrafts/\n*.txt\nkeep/private.*\n**/deeper/*\n")
    names = _rel(discover([vault], exclude=[vault / "index"]), vault)
    assert names == ["a.MD", "b.md", "c.markdown", "doc.PDF", "keep/k.pdf", "sub/z.md"]
    assert classify(vault / "drafts" / "d.md", [vault]) is None
    assert classify(vault / "sub" / "drafts" / "d2.md", [vault]) is None
    assert isinstance(classify(vault / "sub" / "z.md", [vault]), Found)


def test_ragignore_negation_and_anchoring() -> None:
    rules = parse_ignore("*.md\n!keep.md\n/top.pdf\n")
    assert is_ignored(rules, "a/b.md", False) and not is_ignored(rules, "a/keep.md", False)
    assert is_ignored(rules, "top.pdf", False) and not is_ignored(rules, "sub/top.pdf", False)


def test_classify_matches_discover(vault: Path) -> None:
    roots = [vault]
    for item in discover(roots, exclude=[vault / "index"]):
        assert classify(item.path, roots, exclude=[vault / "index"]) == item
    for ignored in (".obsidian/workspace.md", ".hidden.md", "sub/.secret/s.md", "img.png", "index/store.md"):
        assert classify(vault / ignored, roots, exclude=[vault / "index"]) is None, ignored
    assert classify(vault.parent / "elsewhere.md", roots) is None


def test_symlinks_never_leave_the_root(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    outside = _write(tmp_path / "outside" / "secret.md", "secret outside")
    _write(root / "real.md")
    os.symlink("/", root / "slash")
    os.symlink(outside, root / "linked-secret.md")
    os.symlink(outside.parent, root / "outdir")
    os.symlink(root, root / "loop")
    os.symlink(root / "real.md", root / "alias.md")
    os.symlink(root / "l1.md", root / "l2.md")
    os.symlink(root / "l2.md", root / "l1.md")
    items = {str(i.path.relative_to(root)): i for i in discover([root])}
    assert isinstance(items["real.md"], Found)
    assert items["slash"].reason == "symlink outside root"
    assert items["linked-secret.md"].reason == "symlink outside root"
    assert items["outdir"].reason == "symlink outside root"
    assert "loop" in items["loop"].reason
    assert "loop" in items["l1.md"].reason and "loop" in items["l2.md"].reason
    assert "inside root" in items["alias.md"].reason  # its target is indexed as real.md
    assert not any(str(i.path).startswith(str(outside.parent)) for i in items.values())
    assert classify(root / "slash" / "etc" / "passwd.md", [root]) is None
    assert classify(root / "linked-secret.md", [root]).reason == "symlink outside root"


def test_fifo_and_unreadable(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _write(root / "ok.md")
    os.mkfifo(root / "pipe.md")
    locked = _write(root / "locked.md")
    locked.chmod(0)
    try:
        items = {i.path.name: i for i in discover([root])}  # must not block on the FIFO
        assert items["pipe.md"].reason == "not a regular file (a FIFO)"
        assert isinstance(items["ok.md"], Found)
        # as a user who cannot read it (root reads any file: ``unprivileged`` drops that)
        code = ("import sys; from ragcli.ingest.discover import discover; "
                "print(next(i.reason for i in discover([sys.argv[1]]) if i.path.name == 'locked.md'))")
        out = subprocess.run(unprivileged(locked) + [sys.executable, "-c", code, str(root)],
                             capture_output=True, text=True, env=rag_env(), timeout=120)
        assert out.stdout.startswith("unreadable"), (out.stdout, out.stderr[-2000:])
    finally:
        locked.chmod(0o644)


def test_single_file_root_and_missing_root(tmp_path: Path) -> None:
    note = _write(tmp_path / "one.md")
    assert [type(i) for i in discover([note])] == [Found]
    missing = list(discover([tmp_path / "nope"]))
    assert isinstance(missing[0], Skipped) and "cannot open" in missing[0].reason


@pytest.mark.skipif(not VAULT.is_dir(), reason="../shared/corpora is not present")
def test_real_vault_has_173_notes() -> None:
    found = [i for i in discover([VAULT]) if isinstance(i, Found)]
    assert len(found) == 173
    assert all(f.path.suffix == ".md" for f in found)
