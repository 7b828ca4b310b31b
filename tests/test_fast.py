"""The CLI's fast path (``ragcli.fast``) and usage errors.

The fast path reads `rag search` / `rag ask` arguments itself so that, through a running
watcher, no Typer, chromadb, numpy or llama.cpp is imported. What must hold:
- it reads every form it accepts exactly as click does (checked against the Typer commands'
  own parser), and hands everything else to Typer;
- through a real detached watcher, its output (text, --json, a terminal's stream) and exit
  codes are the same bytes as the Typer path's and as an answer made in process;
- the watcher sends the chosen quotes as their own event before generation;
- usage errors exit 2 with click's usage message, whichever command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT, ok, rag
from helpers import on_a_terminal as helpers_terminal
from test_daemon import detach, index_dir, vault  # noqa: F401 - fixtures: a vault, and no watcher left behind

from ragcli.cli import full_app, main
from ragcli.fast import DEFAULTS, FLAG, FLOAT, INT, OPTIONS, POSITIONAL, TEXT, parse

HEAVY = ("typer", "click", "chromadb", "numpy", "llama_cpp", "ragcli.store", "ragcli.app")


def _click_command(name: str):
    import typer.main

    return typer.main.get_command(full_app()).commands[name]


def _click_params(name: str, args: list[str]) -> dict:
    command = _click_command(name)
    with command.make_context(f"rag {name}", list(args)) as ctx:
        return dict(ctx.params)


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_the_option_table_is_the_typer_commands_own(name):
    command = _click_command(name)
    table = {}
    for param in command.params:
        if param.param_type_name == "argument":
            assert param.name == POSITIONAL[name]
            continue
        if "--help" in param.opts:
            continue
        annotation = param.type_descriptor.annotation  # typer 0.29: the parameter's Python type
        kind = FLAG if param.is_flag else {int: INT, float: FLOAT, str: TEXT}[annotation]
        for opt in param.opts + param.secondary_opts:
            table[opt] = (param.name, kind)
        assert DEFAULTS[name][param.name] == param.default, param.name
    assert table == OPTIONS[name]


FORMS = [
    ["search", "pour over"], ["search", "q", "-k", "3"], ["search", "-k", "3", "q"], ["search", "q", "--top-k=7"],
    ["search", "--json", "q", "--mode", "keyword", "--path", "*/Coffee/*", "--tag", "x", "--since",
     "2024-01-01", "--until=2025-01-01"],
    ["search", "q", "--mode="], ["search", ""], ["search", "é ü 漢字"], ["search", "q", "-k", "0"],
    ["ask", "why?"], ["ask", "why?", "--quotes", "--json"], ["ask", "--max-tokens", "48", "q", "--temperature", "0.5"],
    ["ask", "q", "--top-k", "4", "--min-score", "1", "--ctx", "2048", "--threads=2", "--gpu-layers", "0",
     "--model", "m.gguf"],
    # Not read here (Typer's to decide, often an error): all must give None.
    ["search"], ["search", "a", "b"], ["search", "q", "-k"], ["search", "q", "-k", "-3"], ["search", "q", "-k3"],
    ["search", "q", "-k", "3.5"], ["search", "q", "-k", "03"], ["search", "q", "-k", " 3"], ["search", "q", "-k", "３"],
    ["search", "q", "--json=1"], ["search", "q", "--bogus"], ["search", "--", "-q"], ["search", "-"],
    ["search", "q", "-h"], ["search", "q", "--help"], ["search", "q", "--mode", "a", "--mode", "b"],
    ["search", "q", "--top-k", "1", "-k", "2"], ["ask", "q", "--min-score", "-1"], ["ask", "q", "--temperature", ".5"],
    ["ask", "q", "--temperature", "1e3"], ["--debug", "search", "q"], ["status"], [], ["searc", "q"],
]


@pytest.mark.parametrize("args", FORMS, ids=[" ".join(f) or "(none)" for f in FORMS])
def test_the_fast_parser_reads_what_it_accepts_as_click_does(args):
    parsed = parse(args)
    if parsed is None:
        return
    command, values = parsed
    assert command == args[0]
    assert values == _click_params(command, args[1:])


def test_forms_the_fast_parser_must_accept_and_refuse():
    accepted = [f for f in FORMS if parse(f) is not None]
    assert len(accepted) == 13  # the first thirteen forms above
    assert accepted == FORMS[:13]


# ---------------------------------------------------------------- usage errors


@pytest.mark.parametrize("args, says", [
    (["search", "--bogus", "x"], "No such option: --bogus"),
    (["search"], "Missing argument"),
    (["search", "x", "-k", "many"], "Invalid value for '-k'"),
    (["ask", "x", "--temperature", "hot"], "Invalid value for '--temperature'"),
    (["index", "--nope"], "No such option: --nope"),
    (["status", "extra"], "Got unexpected extra argument"),
    (["watch", "--debounce", "soon"], "Invalid value for '--debounce'"),
    (["nosuch"], "No such command 'nosuch'"),
    (["--nope"], "No such option: --nope"),
])
def test_usage_errors_exit_2_with_clicks_usage_message(args, says, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Usage: " in err and f"Error: {says}" in err, err
    assert "Error: unexpected" not in err and "Traceback" not in err


def test_a_usage_error_from_a_real_process(rag_home):
    proc = rag("search", "x", "--bogus", home=rag_home)
    assert proc.returncode == 2
    assert b"Usage: " in proc.stderr and b"No such option: --bogus" in proc.stderr and not proc.stdout


# ---------------------------------------------------------------- through a real watcher


def _heavy_after(args: list[str], **env) -> tuple[int, list[str]]:
    code = ("import sys\nfrom ragcli.cli import main\ncode = main(sys.argv[1:])\n"
            f"print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)\n"
            "sys.exit(code)")
    e = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=e, timeout=300)
    line = [x for x in proc.stderr.splitlines() if x.startswith("HEAVY ")]
    assert line, proc.stderr[-3000:]
    return proc.returncode, eval(line[-1][6:])  # noqa: S307 - our own repr of a list of names


def on_a_terminal(*args: str, **env) -> tuple[int, bytes]:
    """`rag ARGS` with stdout on a pseudo-terminal (so `rag ask` streams): (exit code, bytes)."""
    return helpers_terminal(args, "stdout", env)


def _ask_events(path, question: str, **fields) -> list[dict]:
    from ragcli.config import load_config
    from ragcli.serve.protocol import connect, encode, settings_key

    request = {"op": "ask", "settings": settings_key(load_config()), "question": question, **fields}
    sock = connect(path, 5.0)
    sock.settimeout(300)
    data = b""
    try:
        sock.sendall(encode(request))
        while not data.endswith(b"\n") or not data.rsplit(b"\n", 2)[-2].startswith(b'{"answer"'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    return [json.loads(x) for x in data.splitlines() if x.strip()]


def test_through_the_watcher_the_same_bytes_as_typer_and_in_process(vault, index_dir, rag_home):  # noqa: F811
    ok(rag("index", str(vault), home=rag_home))
    detach()
    home = {"RAG_HOME": str(rag_home)}

    # Nothing heavy is imported when the watcher answers, and it did answer (require).
    for args in (["search", "--json", "sourdough starter"], ["search", "lentils", "-k", "2"],
                 ["ask", "--quotes", "How do I make sourdough bread?"]):
        code, heavy = _heavy_after(args, RAG_DAEMON="require", **home)
        assert code == 0 and heavy == [], (args, heavy)

    # The same stdout, stderr and exit code: fast path through the watcher, the Typer app
    # through the watcher (`--debug` first is not read by the fast path), and in process.
    ways = {"fast": ([], "require"), "typer": (["--debug"], "require"), "in process": ([], "off")}
    cases = [["search", "sourdough starter"], ["search", "--json", "night trains", "--mode", "vector"],
             ["search", "bread", "--tag", "baking", "-k", "3"], ["search", "--json", "nothing-matches-xyzzy",
                                                                "--mode", "keyword"],
             ["ask", "--quotes", "How do I make sourdough bread?"],
             ["ask", "--quotes", "--json", "How long do lentils simmer?"],
             ["ask", "--max-tokens", "40", "How long do lentils simmer?"],
             ["ask", "--json", "--max-tokens", "40", "How do I make sourdough bread?"],
             ["ask", "What is the capital of Mongolia?"],
             ["search", "x", "--mode", "sql"]]  # a bad value our config refuses: the same error
    for case in cases:
        results = {}
        for way, (prefix, daemon) in ways.items():
            proc = rag(*prefix, *case, home=rag_home, env={"RAG_DAEMON": daemon})
            out = proc.stdout
            if "--json" in case and case[0] == "ask" and proc.returncode == 0:
                data = json.loads(out)
                data.pop("timings")
                out = json.dumps(data).encode()
            err = proc.stderr
            if prefix and b"Traceback" in err:  # --debug shows the traceback before the error line
                err = err[err.rindex(b"\nError: ") + 1:]
            results[way] = (proc.returncode, out, err)
        assert results["fast"] == results["typer"] == results["in process"], case
        assert (results["fast"][0] == 0) == (case[-1] != "sql"), results["fast"]
    assert b"Error: " in results["fast"][2] and results["fast"][0] == 3  # the `--mode sql` case

    # On a terminal `rag ask` streams: the quotes first, then the checked sentences; the
    # watcher's stream and an in-process one print the same bytes.
    question = "How do I make sourdough bread?"
    warm = on_a_terminal("ask", "--max-tokens", "40", question, RAG_DAEMON="require", **home)
    cold = on_a_terminal("ask", "--max-tokens", "40", question, RAG_DAEMON="off", **home)
    assert warm[0] == 0 and warm == cold, (warm, cold)
    assert b"[1] line" in warm[1].split(b"\n", 2)[1], warm[1][:200]  # a note's name, then its quotes
    quotes = on_a_terminal("ask", "--quotes", question, RAG_DAEMON="require", **home)
    assert quotes == on_a_terminal("ask", "--quotes", question, RAG_DAEMON="off", **home)
    assert quotes[0] == 0 and b"[1] line" in quotes[1] and b"Sources:" not in quotes[1]

    # The wire: started, then the quotes as their own event before any token, then the answer
    # (whose quotes they are); with quotes_only, no token at all.
    events = _ask_events(index_dir / "watch.sock", question, max_tokens=40)
    kinds = [next(k for k in ("started", "quotes", "token", "answer") if k in e) for e in events]
    assert kinds[0] == "started" and kinds[1] == "quotes" and kinds[-1] == "answer", kinds
    # tokens only for checked sentences that add to the quotes (often none): after the quotes, never twice
    assert all(k == "token" for k in kinds[2:-1]) and kinds.count("quotes") == 1
    assert events[1]["quotes"] == events[-1]["answer"]["quotes"] and events[1]["quotes"]
    events = _ask_events(index_dir / "watch.sock", question, quotes_only=True)
    kinds = [next(k for k in ("started", "quotes", "token", "answer") if k in e) for e in events]
    assert kinds == ["started", "quotes", "answer"] and not events[-1]["answer"]["model"]

    ok(rag("watch", "--stop", "--json", home=rag_home, timeout=120))
