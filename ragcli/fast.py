"""The CLI's fast path: `rag search` and `rag ask` without importing Typer.

A running watcher answers a search in a few milliseconds; what a user waits for is Python's
start-up and imports. So ``cli.main`` first hands the arguments to ``run_fast``, which runs
these two commands itself when it understands every argument exactly as click would, and
otherwise returns None so the Typer app handles them (help, usage errors, anything unusual).
It then runs the very code the Typer commands run (``commands.run``), so output and exit
codes are the same bytes either way; through a watcher, nothing heavy is ever imported. When
no watcher answers (no socket, a stale one, busy, other settings), that same code works in
process, as under Typer; the watcher is asked once, never twice.

Understood: the command name first, then in any order one positional argument (not starting
with "-") and the command's options as ``--name value``, ``--name=value`` or ``-k value``,
each at most once, with values that do not start with "-" and, for numbers, plain decimal
digits. ``tests/test_fast.py`` checks this table against the Typer commands' own options.
"""

from __future__ import annotations

import re

INT, FLOAT, TEXT, FLAG = "int", "float", "text", "flag"
_INT = re.compile(r"(0|[1-9][0-9]{0,8})")
_FLOAT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,9})?")

# command -> option name -> (parameter, kind); the positional parameter; defaults (a flag is
# off, any other option None: the config's value).
OPTIONS: dict[str, dict[str, tuple[str, str]]] = {
    "search": {"-k": ("k", INT), "--top-k": ("k", INT), "--mode": ("mode", TEXT), "--path": ("path", TEXT),
               "--tag": ("tag", TEXT), "--since": ("since", TEXT), "--until": ("until", TEXT),
               "--json": ("as_json", FLAG)},
    "ask": {"--quotes": ("quotes", FLAG), "--model": ("model", TEXT), "--temperature": ("temperature", FLOAT),
            "--max-tokens": ("max_tokens", INT), "--ctx": ("ctx", INT), "--threads": ("threads", INT),
            "--gpu-layers": ("gpu_layers", INT), "--n-gpu-layers": ("gpu_layers", INT), "-k": ("k", INT),
            "--top-k": ("k", INT), "--mode": ("mode", TEXT), "--min-score": ("min_score", FLOAT),
            "--json": ("as_json", FLAG), "-v": ("verbose", FLAG), "--verbose": ("verbose", FLAG)},
}
POSITIONAL = {"search": "query", "ask": "question"}
DEFAULTS: dict[str, dict] = {command: {param: False if kind == FLAG else None for param, kind in options.values()}
                              for command, options in OPTIONS.items()}


def parse(args: list[str]) -> tuple[str, dict] | None:
    """(command, its parameters), or None: not a form this parser is sure to read as click does."""
    if not args or args[0] not in OPTIONS:
        return None
    command, options = args[0], OPTIONS[args[0]]
    values = dict(DEFAULTS[command])
    seen: set[str] = set()
    positional: list[str] = []
    rest = iter(args[1:])
    for token in rest:
        if not token.startswith("-"):
            positional.append(token)
            continue
        name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in options:
            return None  # --help, -h, --, -, an unknown option, -k5: the Typer app decides
        param, kind = options[name]
        if param in seen:
            return None
        seen.add(param)
        if kind == FLAG:
            if eq:
                return None
            values[param] = True
            continue
        if not eq:
            value = next(rest, None)
            if value is None:
                return None
        if value.startswith("-"):
            return None
        if kind == TEXT:
            values[param] = value
        elif kind == INT and _INT.fullmatch(value):
            values[param] = int(value)
        elif kind == FLOAT and _FLOAT.fullmatch(value):
            values[param] = float(value)
        else:
            return None
    if len(positional) != 1:
        return None
    values[POSITIONAL[command]] = positional[0]
    return command, values


def run_fast(args: list[str]) -> int | None:
    """Run `rag search` / `rag ask` here and return 0, or None: the Typer app runs it."""
    parsed = parse(args)
    if parsed is None:
        return None
    command, values = parsed
    from .commands import run

    getattr(run, command)(**values)  # the parameters are named as ``run.search`` and ``run.ask`` name them
    return 0
