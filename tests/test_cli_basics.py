"""The CLI's shape: fast start-up (heavy libraries imported lazily), help everywhere,
every command documented in the README, errors as one line with a distinct exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from ragcli.cli import full_app, main

app = full_app()  # the Typer app with every command registered

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("chromadb", "llama_cpp", "pypdf", "watchdog", "numpy", "mcp")


def test_import_cli_does_not_import_heavy_libraries():
    code = ("import ragcli.cli, sys; "
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_does_not_import_heavy_libraries():
    code = ("import sys\nfrom ragcli.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY []" in out.stdout


def _command_names():
    import typer.main

    group = typer.main.get_command(app)
    names = []
    for name, cmd in group.commands.items():
        names.append(name)
        for sub in getattr(cmd, "commands", {}):
            names.append(f"{name} {sub}")
    return names


def test_every_command_has_help_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    runner = CliRunner()
    for name in _command_names():
        result = runner.invoke(app, [*name.split(), "--help"])
        assert result.exit_code == 0, name
        assert "Usage" in result.output
        assert f"rag {name}" in readme, f"`rag {name}` is not documented in README.md"


def test_search_without_index_is_one_line_error_with_exit_code(capsys):
    code = main(["search", "anything"])
    err = capsys.readouterr().err
    assert code == 4
    assert "Error: no index" in err
    assert "Traceback" not in err


def test_bad_config_value_is_a_config_error(rag_home, capsys):
    (rag_home / "config.toml").write_text('top_k = "many"\n')
    code = main(["status"])
    assert code == 3
    assert "top_k" in capsys.readouterr().err


def test_a_number_under_its_least_is_refused_under_the_name_the_user_typed(rag_home, monkeypatch, capsys):
    """`-k 0` printed "No results.", `--ctx 64` crashed in llama.cpp's first decode and `--ctx -5`
    blamed the model file: each is now refused before anything runs, named as it was given."""
    for args, says in ((["search", "espresso", "-k", "0"], "--top-k must be at least 1, got 0"),
                       (["ask", "espresso", "--ctx", "64"], "--ctx must be at least 128, got 64"),
                       (["ask", "espresso", "--ctx", "-5"], "--ctx must be at least 128, got -5")):
        assert main(args) == 3, args
        assert says in capsys.readouterr().err
    (rag_home / "config.toml").write_text("chunk_tokens = 100\nchunk_overlap = 100\n")
    assert main(["status"]) == 3
    assert "chunk_overlap (100) must be less than chunk_tokens (100)" in capsys.readouterr().err
    (rag_home / "config.toml").write_text("")
    monkeypatch.setenv("RAG_MAX_TOKENS", "0")
    assert main(["status"]) == 3
    assert "RAG_MAX_TOKENS must be at least 1, got 0" in capsys.readouterr().err


def test_an_empty_question_is_a_usage_error(rag_home, capsys):
    """Not "Your notes don't seem to cover this", as if the notes were read for it."""
    for question in ("", "   "):
        assert main(["ask", question, "--quotes"]) == 2
        err = capsys.readouterr().err
        assert "Error: the question is empty" in err and "Traceback" not in err


def test_unknown_config_key_is_named(rag_home, capsys):
    (rag_home / "config.toml").write_text('chunk_tokns = 100\n')
    assert main(["status"]) == 3
    assert "chunk_tokns" in capsys.readouterr().err


def test_config_precedence_flag_env_file_default(rag_home, monkeypatch):
    from ragcli.config import load_config

    (rag_home / "config.toml").write_text("top_k = 3\nmode = 'keyword'\n")
    assert load_config().top_k == 3
    monkeypatch.setenv("RAG_TOP_K", "4")
    assert load_config().top_k == 4
    assert load_config({"top_k": 6}).top_k == 6
    assert load_config().mode == "keyword"
    assert load_config().temperature == 0.1
