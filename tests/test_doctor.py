"""`rag doctor` and `rag models` on real installs and real broken files."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragcli.cli import full_app, main
from ragcli.config import load_config
from ragcli.maintenance.doctor import diagnose, exit_code

app = full_app()  # the Typer app with every command registered


def test_doctor_reports_llama_build_versions_and_models(rag_home):
    result = CliRunner().invoke(app, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True
    names = {(c["area"], c["name"]): c for c in data["checks"]}
    assert ("versions", "llama-cpp-python") in names and ("versions", "chromadb") in names
    assert "AVX" in names[("llama.cpp", "cpu features")]["detail"] or names[("llama.cpp", "cpu features")]["detail"]
    assert ("llama.cpp", "backend") in names and ("llama.cpp", "devices") in names
    gen = names[("models", "generation model")]
    assert gen["status"] == "ok" and "loads and generates" in gen["detail"]
    assert names[("index", "index")]["status"] == "warn"  # no index yet: a hint, not a failure
    assert "rag index" in names[("index", "index")]["fix"]


def test_doctor_fails_with_the_model_code_and_a_fix_on_a_broken_model(rag_home, monkeypatch, capsys):
    bad = rag_home / "broken.gguf"
    bad.write_bytes(b"GGUF" + bytes(range(200)))
    monkeypatch.setenv("RAG_LLM_MODEL", str(bad))
    code = main(["doctor", "--no-load"])
    out = capsys.readouterr().out
    assert code == 5
    assert "FAIL generation model" in out and "fix:" in out


def test_doctor_flags_an_unreachable_generation_server(rag_home, monkeypatch):
    monkeypatch.setenv("RAG_LLM_URL", "http://127.0.0.1:9/v1")
    checks = diagnose(load_config(), load_models=False)
    failing = [c for c in checks if c.status == "fail"]
    assert failing and failing[0].name == "generation server" and failing[0].fix
    assert exit_code(checks) == 5


def test_models_lists_both_roles(rag_home):
    result = CliRunner().invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    specs = {s["role"]: s for s in json.loads(result.stdout)["models"]}
    assert set(specs) == {"embedding", "generation"}
    assert specs["generation"]["present"] is True and specs["generation"]["size"] > 50_000_000
    assert specs["generation"]["path"].endswith(".gguf")
    plain = CliRunner().invoke(app, ["models"])
    assert "generation" in plain.stdout and "embedding" in plain.stdout
