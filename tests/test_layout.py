"""The shape of the code, checked: no import cycles, the store's technology stays inside the
store, modules stay small, and every import inside ragcli names something that exists.

The import graph is read from the source with ``ast`` (every import statement, including
those inside functions and under TYPE_CHECKING: a cycle through a lazy import is still a
cycle in the design).
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ragcli"
WARN_LINES = 400  # past this a module is worth a look for a real seam to split along
MAX_LINES = 600  # past this it is two modules: splitting to stay under 400 would cut at no seam
STORE_ONLY = ("sqlite3", "chromadb")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str) -> list[tuple[str, int]]:
    """(imported module, line) for every import in module ``name``, relative ones resolved."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    package = name if _is_package(name) else name.rpartition(".")[0]
    result = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            result += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{target}.{alias.name}"
                result.append((sub if sub in MODULES else target, node.lineno))
    return result


def _graph() -> dict[str, set[str]]:
    return {name: {t for t, _ in _imports(name) if t in MODULES and t != name} for name in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_ragcli_import_names_a_module():
    missing = [(name, target, line) for name in MODULES for target, line in _imports(name)
               if target.startswith("ragcli") and target not in MODULES]
    assert missing == []


def test_sqlite3_and_chromadb_are_imported_only_in_the_store():
    outside = [(name, target, line) for name in MODULES if not name.startswith("ragcli.store")
               for target, line in _imports(name) if target.split(".")[0] in STORE_ONLY]
    assert outside == []


def test_only_the_store_reaches_into_the_manifest():
    """Callers use ``Index`` methods: no ``.manifest`` or ``.db`` attribute chains outside store/."""
    offenders = []
    for name, path in MODULES.items():
        if name.startswith("ragcli.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("manifest", "_m", "db"):
                offenders.append((name, node.lineno, node.attr))
    assert offenders == []


def _line_counts() -> dict[str, int]:
    return {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in MODULES.items()}


def test_modules_stay_small():
    counts = _line_counts()
    for name, n in sorted(counts.items()):
        if WARN_LINES < n <= MAX_LINES:
            warnings.warn(f"{name} has {n} lines: is there a seam to split it along?", stacklevel=1)
    assert {name: n for name, n in counts.items() if n > MAX_LINES} == {}


def test_commands_only_parse_options_and_render():
    """A command module imports no engine at its top (lazily inside the command is fine) and
    reaches the store, models and pipelines only through library functions."""
    for name in MODULES:
        if not name.startswith("ragcli.commands."):
            continue
        tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                module = node.module or "" if isinstance(node, ast.ImportFrom) else node.names[0].name
                assert module.split(".")[0] not in ("rich", "chromadb", "llama_cpp", "pypdf", "watchdog"), name
        for target, line in _imports(name):
            assert not target.startswith(("ragcli.store.", "ragcli.models.gguf", "ragcli.embed.llama")), \
                (name, target, line)
