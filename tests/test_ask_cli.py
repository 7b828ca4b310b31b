"""`rag ask` end to end: real index, real SmolLM2, the CLI in-process and as a subprocess
(with no network at all where `unshare -n` works)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys


from ragcli.pipeline.answer import NOT_COVERED
from ragcli.cli import main

from conftest import VAULT

EMBED = str(VAULT / "Linking notes and files" / "Embed files.md")
ANSWERABLE = [
    "How can I show the contents of one note inside another note?",
    "How do I make a callout foldable?",
    "How do I add an alias to a note?",
]
UNANSWERABLE = [
    "What is the capital of Australia?",
    "How do I configure a VLAN on a Cisco switch?",
    "What is the boiling point of water at sea level?",
    "Who won the 2018 FIFA World Cup?",
    "How do I bake sourdough bread?",
]


def _use(monkeypatch, env: dict[str, str]) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def _ask_json(capsys, *args) -> tuple[int, dict]:
    code = main(["ask", *args, "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip() else {})


def _no_network_prefix() -> list[str]:
    """`unshare -n` when it works here (root, unprivileged user namespaces), else nothing."""
    if shutil.which("unshare") is None:
        return []
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return ["unshare", "-n"] if probe.returncode == 0 else []


def test_acceptance_embed_question_offline(help_vault_env):
    prefix = _no_network_prefix()
    env = {**os.environ, **help_vault_env}
    proc = subprocess.run([*prefix, sys.executable, "-m", "ragcli.cli", "ask", ANSWERABLE[0], "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    paths = [s["path"] for s in result["sources"]]
    assert EMBED in paths
    cited = [int(n) for n in re.findall(r"\[(\d+)\]", result["answer"])]
    assert result["cited"] and set(cited) <= set(result["cited"])  # the quotes, or the sentences' [n]
    assert all(1 <= n <= len(result["sources"]) for n in result["cited"])  # every citation is a source
    assert [s["n"] for s in result["sources"]] == list(range(1, len(paths) + 1))
    assert set(result) >= {"question", "answer", "sources", "model", "timings", "prompt_tokens",
                           "completion_tokens"}
    assert set(result["timings"]) >= {"retrieve_s", "first_token_s", "total_s"}
    if result["completion_tokens"]:  # the model ran: its first token came inside the call
        assert 0 < result["timings"]["model_first_token_s"] <= result["timings"]["total_s"]
    for s in result["sources"]:
        assert set(s) >= {"n", "path", "title", "heading", "line_start", "line_end", "page"}
    if prefix:
        print("ran with no network (unshare -n)")


def test_how_do_i_embed_a_note_shows_the_syntax_itself(help_vault_env, monkeypatch, capsys):
    """The issue's example: the lead-in "To embed a note:" is quoted with the code block after it."""
    _use(monkeypatch, help_vault_env)
    code, result = _ask_json(capsys, "How do I embed one note inside another?", "--quotes")
    assert code == 0
    block = [q for q in result["quotes"] if q["path"] == EMBED and q["text"].startswith("To embed a note:")]
    assert block and "![[Internal links]]" in block[0]["text"], result["quotes"]


def test_unanswerable_questions_get_no_sources(help_vault_env, monkeypatch, capsys):
    _use(monkeypatch, help_vault_env)
    refused = 0
    for question in UNANSWERABLE:
        code, result = _ask_json(capsys, question)
        assert code == 0
        if result["sources"] == []:
            assert result["answer"] == NOT_COVERED
            refused += 1
    assert refused >= 4
    for question in ANSWERABLE:
        code, result = _ask_json(capsys, question)
        assert code == 0 and result["sources"], question


def test_plain_output_groups_quotes_under_their_note(help_vault_env, monkeypatch, capsys):
    _use(monkeypatch, help_vault_env)
    assert main(["ask", ANSWERABLE[1], "--max-tokens", "48"]) == 0
    out = capsys.readouterr().out
    assert out.strip() and "\x1b" not in out  # not a terminal: no colour, no animation, no link
    lines = out.splitlines()
    headers = [ln for ln in lines if ln and not ln.startswith(" ")]
    quotes = [ln for ln in lines if re.match(r"  \[\d+\] lines? \d+(-\d+)?:", ln)]
    assert quotes and any("Callouts.md" in h for h in headers)
    # each note is named once, above its quotes; each quote once
    assert len({h for h in headers if ".md" in h}) == len([h for h in headers if ".md" in h])
    assert len(set(quotes)) == len(quotes)
    numbers = [int(re.match(r"  \[(\d+)\]", q).group(1)) for q in quotes]
    assert numbers == list(range(1, len(numbers) + 1))  # numbered down the page, as grouped
    assert "Sources:" not in out and "Your notes say" not in out


def test_nothing_relevant_plain_output(help_vault_env, monkeypatch, capsys):
    _use(monkeypatch, help_vault_env)
    assert main(["ask", UNANSWERABLE[0]]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    # the refusal, the question's words no note holds, then where to look: the nearest notes by
    # name, no quote from them
    assert lines[0] == NOT_COVERED and len(lines) <= 3
    rest = lines[1:]
    if rest and rest[0].startswith("No note mentions "):
        assert "\u201ccapital\u201d" in rest[0] or "\u201cAustralia\u201d" in rest[0]
        rest = rest[1:]
    assert all(line.startswith("The nearest notes, which may not answer it: ") for line in rest)
    assert not any("\u201c" in line for line in rest)


def test_random_bytes_model_exits_with_model_code_without_traceback(help_vault_env, tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(os.urandom(1 << 16))
    env = {**os.environ, **help_vault_env, "RAG_LLM_MODEL": str(junk)}
    proc = subprocess.run([sys.executable, "-m", "ragcli.cli", "ask", ANSWERABLE[0]],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 5
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("Error:") and "Hint:" in proc.stderr


def test_missing_model_file_is_one_line_with_hint(help_vault_env, monkeypatch, capsys):
    _use(monkeypatch, help_vault_env)
    assert main(["ask", "anything", "--model", "/nonexistent/model.gguf"]) == 5
    err = capsys.readouterr().err
    assert "not found" in err and "Hint:" in err


def test_tiny_context_still_answers_without_overflow(help_vault_env, monkeypatch, capsys):
    _use(monkeypatch, help_vault_env)
    code, result = _ask_json(capsys, ANSWERABLE[0], "--ctx", "256", "--max-tokens", "64")
    assert code == 0
    assert result["prompt_tokens"] + result["completion_tokens"] <= 256
    # quotes (not whole chunks) now fill the prompt: the window keeps at least one, and no
    # more than a full-size window would
    code, roomy = _ask_json(capsys, ANSWERABLE[0], "--max-tokens", "64")
    assert 1 <= len(result["sources"]) <= len(roomy["sources"])


def test_ask_without_index(capsys):
    assert main(["ask", "anything"]) == 4
    assert "Error:" in capsys.readouterr().err
