"""Entry point: runs a command and turns errors into one line and an exit code.

The commands themselves (``ragcli.commands``) have no error handling; ``main`` is the one
place where a RagError becomes "Error: ..." plus a hint on stderr and its exit code, and
where a usage error (unknown option, missing argument, bad value) becomes click's usage
message and exit 2.

`rag search` and `rag ask` written in a form ``ragcli.fast`` fully understands skip Typer
(and its ~0.1-0.3 s of imports): through a running watcher the whole command is then Python's
start-up, a socket round trip and printing. Anything else goes through the Typer app.
"""

from __future__ import annotations

import contextlib
import os
import sys

from .errors import ExitCode, RagError


def _report(exc: BaseException) -> int:
    from .render import clean, err

    if isinstance(exc, RagError):
        err().print(f"Error: {clean(str(exc))}", style="red")
        if exc.hint:
            err().print(f"Hint: {exc.hint}", style="dim")
        return int(exc.exit_code)
    err().print(f"Error: unexpected {type(exc).__name__}: {clean(str(exc))}", style="red")
    err().print("Hint: run again with --debug for the traceback, and report it.", style="dim")
    return int(ExitCode.UNEXPECTED)


def full_app():
    """The Typer app with every command registered (importing a command module registers it)."""
    from .app import app
    from .commands import index, search, status, ask, chat, models, doctor, eval, verify, watch, mcp  # noqa: F401

    return app


def _program(args: list[str]) -> int:
    from .fast import run_fast

    code = run_fast(args)
    if code is not None:
        return code
    # Without standalone mode, click *returns* the code of a typer.Exit instead of raising.
    returned = full_app()(args=args, standalone_mode=False)
    return returned if isinstance(returned, int) else 0


def _usage_or_exit(exc: BaseException) -> int | None:
    """The exit code of click's and typer's own exceptions (a usage message shown), else None.
    Typer bundles its own click (``typer._click``); the standalone one is checked too."""
    typer_exceptions = sys.modules.get("typer.exceptions")
    if typer_exceptions is not None:
        if isinstance(exc, typer_exceptions.Exit):
            return exc.exit_code
        if isinstance(exc, typer_exceptions.Abort):
            return int(ExitCode.INTERRUPTED)
    for name in ("typer._click.exceptions", "click.exceptions"):
        module = sys.modules.get(name)
        if module is None:
            continue
        for kind in ("Exit", "Abort"):
            if hasattr(module, kind) and isinstance(exc, getattr(module, kind)):
                return exc.exit_code if kind == "Exit" else int(ExitCode.INTERRUPTED)
        if isinstance(exc, module.ClickException):
            # `rag` alone: the help was printed already (rich), and the message is empty.
            if not (type(exc).__name__ == "NoArgsIsHelpError" and not exc.format_message()):
                exc.show()
            return int(ExitCode.USAGE) if isinstance(exc, module.UsageError) else exc.exit_code
    return None


def _quiet_broken_pipe() -> None:
    """The reader went away: what is left in stdout's buffer has nowhere to go (flushing it
    at exit would print a second error)."""
    with contextlib.suppress(OSError, ValueError):  # not a real file (a test's capture)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) the process exit code."""
    # The index and the models cache hold the user's notes: whatever this program creates
    # (Chroma's files included) is owner-only. A process-wide setting, so the program sets it,
    # not the library.
    os.umask(0o077)
    # Before anything native loads: a CUDA build of llama.cpp crashes when numpy came first.
    from .native import llama_first

    llama_first()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _program(args)
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        code = int(ExitCode.INTERRUPTED)
    except SystemExit as exc:  # typer.Exit inside commands
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BrokenPipeError:  # `rag search ... | head`: as Typer does, quietly, exit 1
        _quiet_broken_pipe()
        code = 1
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into codes
        code = _usage_or_exit(exc)
        if code is None:
            app_module = sys.modules.get("ragcli.app")
            if app_module is not None and app_module.state.get("debug"):
                import traceback

                traceback.print_exc()
            code = _report(exc)
    if argv is None:
        _exit(code)
    return code


def _exit(code: int) -> None:
    """End the process. A command ends with its work committed and closed; the interpreter's
    teardown of what it loaded (chromadb, llama.cpp, numpy: thousands of modules and objects)
    takes 0.1-0.25 s more, an eighth of a one-note re-index of MDN. So, with no other thread
    left to join: the exit handlers, the output flushed, and out. Otherwise the normal exit."""
    import threading

    if threading.active_count() == 1:
        import atexit

        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            _quiet_broken_pipe()
        else:
            os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main()
