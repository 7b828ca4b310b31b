"""`rag ask` and `rag chat`: answers from the notes, with numbered sources."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ..app import app
from ..config import load_config

# Options shared by ask and chat, mapped onto Config fields.
_MODEL = typer.Option(None, "--model", help="GGUF generation model file (or the server's model name with llm_url).")
_TEMPERATURE = typer.Option(None, "--temperature", help="Sampling temperature (0 = greedy).")
_MAX_TOKENS = typer.Option(None, "--max-tokens", help="Most tokens in an answer.")
_CTX = typer.Option(None, "--ctx", help="Context window in tokens.")
_THREADS = typer.Option(None, "--threads", help="CPU threads (0 = all cores).")
_GPU = typer.Option(None, "--gpu-layers", help="Layers to offload to the GPU (-1 = all, when llama.cpp has a GPU backend).")
_K = typer.Option(None, "-k", "--top-k", help="Chunks to retrieve.")
_MODE = typer.Option(None, "--mode", help="Retrieval: hybrid, vector or keyword.")
_MIN_SCORE = typer.Option(None, "--min-score", help="Relevance threshold on the best cosine (< 0: calibrated default).")
_JSON = typer.Option(False, "--json", help="Print JSON (one object per question for chat).")


def _config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score):
    return load_config({"llm_model": model, "temperature": temperature, "max_tokens": max_tokens,
                        "n_ctx": ctx, "threads": threads, "n_gpu_layers": gpu_layers,
                        "top_k": k, "mode": mode, "min_score": min_score})


def _require_index(config) -> None:
    from ..errors import NoIndexError
    from ..store import index_exists

    if not index_exists(config):
        raise NoIndexError(f"no index in {config.index_dir}")


@app.command("ask")
def ask_cmd(
    question: str = typer.Argument(..., help="The question to answer from your notes."),
    model: Optional[str] = _MODEL, temperature: Optional[float] = _TEMPERATURE,
    max_tokens: Optional[int] = _MAX_TOKENS, ctx: Optional[int] = _CTX,
    threads: Optional[int] = _THREADS, gpu_layers: Optional[int] = _GPU,
    k: Optional[int] = _K, mode: Optional[str] = _MODE, min_score: Optional[float] = _MIN_SCORE,
    as_json: bool = _JSON,
) -> None:
    """Answer a question from your notes, with numbered citations and sources."""
    from .. import render
    from ..answer import answer

    config = _config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    _require_index(config)
    stream = not as_json and sys.stdout.isatty()
    result = answer(config, question, on_token=_stream_to_stdout if stream else None)
    if as_json:
        render.print_json(result.to_json())
    else:
        print_answer(result, streamed=stream and result.covered)


def _stream_to_stdout(piece: str) -> None:
    from ..render import clean

    sys.stdout.write(clean(piece))
    sys.stdout.flush()


def display_path(path: str) -> str:
    p = Path(path)
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(p.relative_to(base))
        except ValueError:
            continue
    return path


def source_line(source) -> str:
    """`[n] path:lines › heading (p. N)`"""
    from ..render import clean

    lines = (f"{source.line_start}" if source.line_start == source.line_end
             else f"{source.line_start}-{source.line_end}")
    text = f"[{source.n}] {display_path(source.path)}:{lines}"
    if source.heading:
        text += f" › {source.heading.replace(' > ', ' › ')}"
    if source.page:
        text += f" (p. {source.page})"
    return clean(text)


def print_answer(result, *, streamed: bool) -> None:
    """The answer (unless it was streamed already), then its sources."""
    from ..render import clean, out, warn

    console = out()
    if streamed:
        sys.stdout.write("\n")
    else:
        console.print(clean(result.text))
    if result.sources:
        console.print("")
        console.print("Sources:", style="bold")
        for source in result.sources:
            cited = source.n in result.cited
            console.print(source_line(source), style=None if cited else "dim")
    if result.removed_citations:
        warn(f"removed citation(s) of sources that do not exist: {' '.join(result.removed_citations)}")


# ---------------------------------------------------------------------------------------


@app.command("chat")
def chat_cmd(
    model: Optional[str] = _MODEL, temperature: Optional[float] = _TEMPERATURE,
    max_tokens: Optional[int] = _MAX_TOKENS, ctx: Optional[int] = _CTX,
    threads: Optional[int] = _THREADS, gpu_layers: Optional[int] = _GPU,
    k: Optional[int] = _K, mode: Optional[str] = _MODE, min_score: Optional[float] = _MIN_SCORE,
    as_json: bool = _JSON,
) -> None:
    """Talk with your notes: follow-up questions understood in context.

    On a terminal: an interactive session (/sources, /clear, /help, /exit; Ctrl-C stops an
    answer, Ctrl-D leaves). Otherwise: one question per line on stdin, one answer each.
    """
    from ..chat import ChatSession

    config = _config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    _require_index(config)
    session = ChatSession(config)
    try:
        if sys.stdin.isatty() and sys.stdout.isatty() and not as_json:
            _interactive(session, config)
        else:
            _batch(session, as_json)
    finally:
        session.close()


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
    from ..render import clean, err, out

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
                result = session.ask(question, on_token=_stream_to_stdout)
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
    try:
        readline.read_history_file(str(path))
    except (OSError, UnicodeDecodeError):
        pass
    readline.set_history_length(1000)
    return path


def _save_history(path) -> None:
    if path is None:
        return
    import readline

    try:
        readline.write_history_file(str(path))
        path.chmod(0o600)
    except OSError:
        pass
