"""`rag chat`: a conversation over the notes (interactive on a terminal, else one question a line)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Optional

from ..app import app
from ..render import print_answer, print_quotes, stream_to_stdout
from .options import CTX, GPU, JSON, K, MAX_TOKENS, MIN_SCORE, MODE, MODEL, TEMPERATURE, THREADS
from .run import answer_config


@app.command("chat")
def chat_cmd(
    model: Optional[str] = MODEL, temperature: Optional[float] = TEMPERATURE,
    max_tokens: Optional[int] = MAX_TOKENS, ctx: Optional[int] = CTX,
    threads: Optional[int] = THREADS, gpu_layers: Optional[int] = GPU,
    k: Optional[int] = K, mode: Optional[str] = MODE, min_score: Optional[float] = MIN_SCORE,
    as_json: bool = JSON,
) -> None:
    """Talk with your notes: follow-up questions understood in context.

    On a terminal: an interactive session (/sources, /clear, /help, /exit; Ctrl-C stops an
    answer, Ctrl-D leaves). Otherwise: one question per line on stdin, one answer each.
    """
    from ..library import Notes, require_index

    config = answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    require_index(config)
    with Notes(config) as notes:
        if sys.stdin.isatty() and sys.stdout.isatty() and not as_json:
            _interactive(notes.chat(), config)
        else:
            _batch(notes.chat(), as_json)


def _batch(session, as_json: bool) -> None:
    from .. import render

    first = True
    for line in sys.stdin:
        question = line.strip()
        if not question:
            continue
        result = session.ask(question)
        if as_json:
            render.print_json(result.to_json())
        else:
            if not first:
                render.out().print("")
            render.out().print(f"Q: {render.clean(question)}", style="bold")
            print_answer(result, streamed=False)
        first = False


HELP = """Ask anything about your notes. Follow-up questions are understood in context.
  /sources  list the sources of the last answer
  /clear    forget the conversation
  /help     this help
  /exit     leave (or Ctrl-D)
Ctrl-C stops an answer; Up/Down recall earlier questions."""


def _interactive(session, config) -> None:
    from ..config import ensure_private_dir
    from ..render import clean, err, out, source_line

    history = _setup_readline(ensure_private_dir(config.data_dir) / "chat_history")
    console = out()
    err().print("rag chat: ask about your notes. /help for commands, Ctrl-D to leave.", style="dim")
    try:
        while True:
            try:
                line = input("› ")
            except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line, not an exit
                sys.stdout.write("\n")
                continue
            except EOFError:
                sys.stdout.write("\n")
                return
            question = line.strip()
            if not question:
                continue
            command = question.lower()
            if command in ("/exit", "/quit", "/q"):
                return
            if command == "/help":
                console.print(HELP)
                continue
            if command == "/clear":
                session.clear()
                console.print("Conversation cleared.", style="dim")
                continue
            if command == "/sources":
                last = session.last
                if last is None or not last.sources:
                    console.print("No sources yet.", style="dim")
                for source in (last.sources if last else []):
                    console.print(source_line(source))
                continue
            if command.startswith("/"):
                console.print(f"Unknown command {clean(question)}; /help lists them.", style="dim")
                continue
            try:
                result = session.ask(question, on_token=stream_to_stdout, on_quotes=print_quotes)
            except KeyboardInterrupt:
                sys.stdout.write("\n")
                err().print("(stopped)", style="dim")
                continue
            if not result.covered:
                console.print(clean(result.text))
            else:
                print_answer(result, streamed=True)
            console.print("")
    finally:
        _save_history(history)


def _setup_readline(path: Path):
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input()
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        readline.read_history_file(str(path))
    readline.set_history_length(1000)
    return path


def _save_history(path) -> None:
    if path is None:
        return
    import readline

    with contextlib.suppress(OSError):
        readline.write_history_file(str(path))
        path.chmod(0o600)
