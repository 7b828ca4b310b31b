"""`ragcli.Notes`, the Python API: the README's example run as written, and the one JSON
shape each type has (what `--json`, MCP and the watcher's socket all send)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python", readme.index("## Use it from Python")) + len("```python")
    return readme[start:readme.index("```", start)]


def test_the_readme_example_runs_as_written(rag_home, models_dir):
    """A user's run: a fresh RAG_HOME, the repository root as the working directory, real models."""
    env = {**os.environ, "RAG_HOME": str(rag_home), "RAG_MODELS_DIR": str(models_dir)}
    proc = subprocess.run([sys.executable, "-c", _readme_example()], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    hits = lines[:3]
    assert len(hits) == 3 and all(re.match(r"\d\.\d{3}  /", h) for h in hits), lines
    assert "Espresso" in hits[0], hits  # the note about the ratio comes first
    quotes = [m for line in lines if (m := re.match(r"\[(\d+)\] (.+?):(\d+)-(\d+)  (.+)", line))]
    assert quotes, lines
    for quote in quotes:  # each quote is the words of a note at the lines it names
        note = Path(quote[2])
        assert note.is_file() and "examples/vault/" in str(note), quote[0]
        span = note.read_text().splitlines()[int(quote[3]) - 1:int(quote[4])]
        assert quote[5].split()[0] in " ".join(span), quote[0]
    assert "not in the notes" not in lines


def test_notes_keeps_models_between_calls_and_says_when_no_watcher_answers(example_vault_env):
    from ragcli import Notes
    from ragcli.config import load_config
    from ragcli.errors import DaemonError

    config = load_config({"max_tokens": 48}, env={**os.environ, **example_vault_env})
    with Notes(config) as notes:
        assert not notes.searcher_loaded and not notes.generator_loaded
        first = notes.search("espresso ratio", k=2)
        assert len(first) == 2 and notes.searcher_loaded and not notes.generator_loaded
        quotes = notes.ask("What espresso ratio do I use?", quotes_only=True)
        assert quotes.quotes and not quotes.text and not notes.generator_loaded
        answer = notes.ask("What espresso ratio do I use?")
        assert answer.covered and notes.generator_loaded
        assert set(answer.cited) <= {s.n for s in answer.sources}
        again = notes.ask("What espresso ratio do I use?")  # the loaded model, rewound: the same answer
        assert again.text == answer.text
        assert notes.status()["files"] > 5
    assert not notes.searcher_loaded and not notes.generator_loaded

    strict = load_config({"daemon": "require"}, env={**os.environ, **example_vault_env})
    with Notes(strict) as notes, pytest.raises(DaemonError):
        notes.search("espresso ratio")


def test_each_type_has_one_json_shape_that_round_trips(example_vault_env):
    from ragcli import Notes
    from ragcli.config import load_config
    from ragcli.types import Answer, Hit

    config = load_config({"max_tokens": 48}, env={**os.environ, **example_vault_env})
    with Notes(config, watcher=False) as notes:
        hits = notes.search("espresso ratio", k=3)
        answer = notes.ask("What espresso ratio do I use?")
        missing = notes.ask("What is the capital of Australia?")
    assert [Hit.from_json(h.to_json()) for h in hits] == hits
    data = answer.to_json()
    assert Answer.from_json(data).to_json() == data
    assert data["covered"] is True and missing.to_json()["covered"] is False
    assert all(isinstance(s["score"], float) for s in data["sources"])
    assert "removed_citations" not in data and "citations_attributed" not in data


def test_every_json_document_carries_its_schema(example_vault_env):
    import json

    env = {**os.environ, **example_vault_env}
    for args in (["status", "--json"], ["search", "--json", "espresso"], ["ask", "--quotes", "--json",
                 "What espresso ratio do I use?"], ["models", "--json"]):
        proc = subprocess.run([sys.executable, "-m", "ragcli.cli", *args], capture_output=True, text=True,
                              env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["schema"] == 1, args
