"""The Typer application object. Command modules in ``ragcli.commands`` register on it.

Kept apart from cli.py so each command module can import it without a cycle. Nothing
heavy may be imported here or at the top of a command module: `rag --help` must stay fast.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="rag",
    help="Ask questions of your own notes (Markdown, Obsidian, PDF), offline, with citations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

state: dict = {"debug": False}


@app.callback()
def _global(debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors.")) -> None:
    state["debug"] = debug
