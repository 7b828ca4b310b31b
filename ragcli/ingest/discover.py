"""Find the files to index under some roots, and say why the odd ones are skipped.

Rules, in order:
- only ``.md``, ``.markdown``, ``.txt`` and ``.pdf`` files (any case) are candidates;
- hidden files and folders (``.obsidian``, ``.trash``, ``.git``, ...) and the ``exclude``
  folders (the index's own folder) are ignored silently, as are ``.ragignore`` matches;
- symlinks are never followed. A link that leaves the root is reported as
  "symlink outside root"; one that points back into the root is skipped too, because its
  target is indexed at its own path (following it would index the same note twice, or loop);
- FIFOs, devices, sockets and unreadable files with a candidate name are reported.

Only names, ``lstat`` and ``readlink`` are used here: no file content, and nothing outside a
root, is ever read (the ``.ragignore`` at the root is the one file opened).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
PDF_SUFFIXES = frozenset({".pdf"})
SUFFIXES = MARKDOWN_SUFFIXES | PDF_SUFFIXES
IGNORE_FILE = ".ragignore"


@dataclass(frozen=True)
class Found:
    path: Path  # absolute, under root
    root: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Skipped:
    path: Path
    reason: str


def is_candidate(path: Path | str) -> bool:
    return os.path.splitext(str(path))[1].lower() in SUFFIXES


# ---------------------------------------------------------------- .ragignore


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _glob_to_regex(glob: str) -> str:
    """fnmatch-style glob over '/'-separated paths: '*' stays in one folder, '**' spans many."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 1:]:
            end = glob.index("]", i + 1)
            body = glob[i + 1:end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


def parse_ignore(text: str) -> tuple[_Rule, ...]:
    """Gitignore-like lines: '#' comments, '!' negation, 'dir/' for folders only.

    A pattern with a '/' inside is anchored at the root; one without matches a name at
    any depth. A folder that matches is pruned with everything under it.
    """
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[1:] if negate else line
        dir_only = line.endswith("/")
        line = line.strip("/") if dir_only else line
        if not line:
            continue
        anchored = "/" in line.lstrip("/") or raw.strip().lstrip("!").startswith("/")
        body = _glob_to_regex(line.lstrip("/"))
        regex = "^" + body + "$" if anchored else "^(?:.*/)?" + body + "$"
        try:
            rules.append(_Rule(re.compile(regex), negate, dir_only))
        except re.error:
            continue  # a broken pattern ignores nothing rather than stopping the walk
    return tuple(rules)


def is_ignored(rules: Iterable[_Rule], rel: str, is_dir: bool) -> bool:
    ignored = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.regex.match(rel):
            ignored = not rule.negate
    return ignored


@lru_cache(maxsize=64)
def _rules_cached(root: str, mtime_ns: int) -> tuple[_Rule, ...]:
    try:
        with open(os.path.join(root, IGNORE_FILE), encoding="utf-8", errors="replace") as fh:
            return parse_ignore(fh.read(1_000_000))
    except OSError:
        return ()


def load_rules(root: Path) -> tuple[_Rule, ...]:
    try:
        st = os.lstat(root / IGNORE_FILE)
    except OSError:
        return ()
    if not stat.S_ISREG(st.st_mode):
        return ()  # a symlinked .ragignore could point outside the root: not read
    return _rules_cached(str(root), st.st_mtime_ns)


# ---------------------------------------------------------------- walking


def _abs(path: Path | str) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(path))))


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _symlink_verdict(path: Path, real_root: str) -> Skipped:
    """Why a symlink is skipped; decided with readlink/realpath only (nothing outside read)."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Skipped(path, "symlink loop")
        real = os.path.realpath(path)
        if not _inside(real, real_root):
            return Skipped(path, "symlink outside root")
        return Skipped(path, "broken symlink")
    real = os.path.realpath(path)
    if not _inside(real, real_root):
        return Skipped(path, "symlink outside root")
    if os.path.isdir(real) and _inside(os.path.realpath(path.parent), real):
        return Skipped(path, "symlink loop (points to a folder that contains it)")
    return Skipped(path, "symlink inside root (its target is indexed at its own path)")


def _special_reason(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"not a regular file ({name})"
    return "not a regular file"


def _file_verdict(path: Path, root: Path, st: os.stat_result) -> Found | Skipped:
    reason = _special_reason(st.st_mode)
    if reason:
        return Skipped(path, reason)
    if not os.access(path, os.R_OK):
        return Skipped(path, "unreadable: permission denied")
    return Found(path=path, root=root, size=st.st_size, mtime_ns=st.st_mtime_ns)


class _Walk:
    """One root's walk: its ignore rules, excluded folders and real path.

    The walk carries each entry's path relative to the root and tells an excluded folder by
    its device and inode (from the lstat it already has): at 14,000 notes in as many
    folders, realpath and relpath per entry were most of an unchanged re-index."""

    def __init__(self, root: Path, exclude: frozenset[str]):
        self.root = root
        self.real_root = os.path.realpath(root)
        self.exclude = exclude
        self.excluded_ids = _identities(exclude)
        self.rules = load_rules(root)

    def rel(self, path: Path) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def pruned_dir(self, path: Path, st: os.stat_result | None = None, rel: str | None = None) -> bool:
        """A hidden, excluded or ignored folder; ``st`` (its lstat) and ``rel`` save work."""
        if path.name.startswith("."):
            return True
        if st is not None:
            if (st.st_dev, st.st_ino) in self.excluded_ids:
                return True
        elif os.path.realpath(path) in self.exclude:
            return True
        return bool(self.rules) and is_ignored(self.rules, self.rel(path) if rel is None else rel, is_dir=True)

    def entry(self, path: Path, st: os.stat_result, rel: str | None = None) -> Found | Skipped | None:
        """Verdict for a non-directory entry already known not to be a pruned folder."""
        if path.name.startswith("."):
            return None
        if stat.S_ISLNK(st.st_mode):
            return _symlink_verdict(path, self.real_root) if self._link_matters(path, rel) else None
        if not is_candidate(path.name) or self._ignored(path, rel):
            return None
        return _file_verdict(path, self.root, st)

    def _ignored(self, path: Path, rel: str | None) -> bool:
        return bool(self.rules) and is_ignored(self.rules, self.rel(path) if rel is None else rel, is_dir=False)

    def _link_matters(self, path: Path, rel: str | None = None) -> bool:
        # A link named like a note, or one to a folder, is worth a line in the report.
        if is_candidate(path.name):
            return not self._ignored(path, rel)
        try:
            return os.path.isdir(path) or not os.path.exists(path)
        except OSError:
            return True

    def walk(self, folder: Path, rel: str = "") -> Iterator[Found | Skipped]:
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Skipped(folder, f"unreadable folder: {exc.strerror or exc}")
            return
        for entry in entries:
            name = entry.name
            if name.startswith("."):  # hidden files and folders: ignored silently, not even stat'ed
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not is_candidate(name) and not entry.is_symlink():
                    continue  # a file that is not a note: nothing to say about it (no lstat)
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                yield Skipped(folder / name, f"unreadable: {exc.strerror or exc}")
                continue
            path = folder / name
            if stat.S_ISDIR(st.st_mode):
                if not self.pruned_dir(path, st, rel + name):
                    yield from self.walk(path, rel + name + "/")
                continue
            verdict = self.entry(path, st, rel + name)
            if verdict is not None:
                yield verdict


def _identities(paths: Iterable[str]) -> frozenset[tuple[int, int]]:
    """(device, inode) of each existing folder in ``paths``."""
    ids = set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        ids.add((st.st_dev, st.st_ino))
    return frozenset(ids)


def discover(roots: Iterable[Path], exclude: Iterable[Path] = ()) -> Iterator[Found | Skipped]:
    """Walk each root (a folder, or a single file) in sorted order; yield Found or Skipped."""
    excluded = frozenset(os.path.realpath(_abs(p)) for p in exclude)
    seen: set[str] = set()
    for root in sorted(_abs(r) for r in roots):
        try:
            st = os.lstat(root)
        except OSError as exc:
            yield Skipped(root, f"cannot open: {exc.strerror or exc}")
            continue
        if stat.S_ISDIR(os.stat(root).st_mode):
            for item in _Walk(root, excluded).walk(root):
                key = str(item.path)
                if key not in seen:  # overlapping roots must not yield a file twice
                    seen.add(key)
                    yield item
        elif str(root) not in seen:
            seen.add(str(root))
            if is_candidate(root):
                yield _file_verdict(root, root.parent, os.stat(root)) if stat.S_ISLNK(st.st_mode) \
                    else _file_verdict(root, root.parent, st)
            else:
                yield Skipped(root, "not a Markdown, text or PDF file")


def root_of(path: Path, roots: Iterable[Path]) -> Path | None:
    """The (deepest) root that holds path, compared on absolute paths."""
    path = _abs(path)
    holding = [root for root in map(_abs, roots) if path == root or root in path.parents]
    return max(holding, key=lambda root: len(str(root)), default=None)


def classify(path: Path, roots: Iterable[Path], exclude: Iterable[Path] = ()) -> Found | Skipped | None:
    """What discover() would say about this one path (for the file watcher).

    None means it is not ours: outside every root, hidden, ignored, or not a candidate
    (a deleted file also gives None; the caller knows it from the event).
    """
    path = _abs(path)
    roots = list(roots)
    root = root_of(path, roots)
    if root is None:
        return None
    if path == root:
        return next(iter(discover([root])), None) if os.path.isfile(root) else None
    walk = _Walk(root, frozenset(os.path.realpath(_abs(p)) for p in exclude))
    parent = path.parent
    while parent != root:  # every folder between the root and the file must be walkable
        if walk.pruned_dir(parent) or os.path.islink(parent):
            return None
        parent = parent.parent
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    return walk.entry(path, st)


def found_at(path: str, roots: list[Path]) -> Found | None:
    """The file at ``path`` when it is one to index, judged as discovery judges it."""
    verdict = classify(Path(path), roots)
    return verdict if isinstance(verdict, Found) else None


def discover_in(roots: list[Path], exclude: list[Path], scope: Iterable[Path] | None) -> Iterator[Found | Skipped]:
    """Everything under the roots, or only what lies in ``scope``, judged by the same rules."""
    if scope is None:
        yield from discover(roots, exclude=exclude)
        return
    seen: set[str] = set()
    for area in scope:
        area = Path(area)
        if area.is_dir() and not area.is_symlink():
            paths = [Path(d) / f for d, _dirs, files in os.walk(area) for f in files]
        else:
            paths = [area]
        for path in sorted(paths):
            if str(path) in seen:
                continue
            seen.add(str(path))
            verdict = classify(path, roots, exclude)
            if verdict is not None:
                yield verdict
