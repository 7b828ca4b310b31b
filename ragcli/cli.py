"""Entry point: registers the commands and turns errors into one line and an exit code.

The commands themselves (``ragcli.commands``) have no error handling; ``main`` is the one
place where a RagError becomes "Error: ..." plus a hint on stderr and its exit code.
"""

from __future__ import annotations

import os
import sys

from .app import app, state
from .errors import ExitCode, RagError

# Importing a command module registers its commands on ``app``.
from .commands import index as _index  # noqa: F401,E402
from .commands import search as _search  # noqa: F401,E402
from .commands import status as _status  # noqa: F401,E402
from .commands import ask as _ask  # noqa: F401,E402
from .commands import chat as _chat  # noqa: F401,E402
from .commands import models as _models  # noqa: F401,E402
from .commands import doctor as _doctor  # noqa: F401,E402
from .commands import eval as _eval  # noqa: F401,E402
from .commands import verify as _verify  # noqa: F401,E402
from .commands import watch as _watch  # noqa: F401,E402
from .commands import mcp as _mcp  # noqa: F401,E402


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


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return (and exit with) the process exit code."""
    # The index and the models cache hold the user's notes: whatever this program creates
    # (Chroma's files included) is owner-only. A process-wide setting, so the program sets it,
    # not the library.
    os.umask(0o077)
    try:
        # Without standalone mode, click *returns* the code of a typer.Exit instead of raising.
        returned = app(args=argv, standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        code = int(ExitCode.INTERRUPTED)
    except SystemExit as exc:  # typer.Exit inside commands
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into codes
        import click

        if isinstance(exc, click.exceptions.Exit):
            code = exc.exit_code
        elif isinstance(exc, click.exceptions.Abort):
            code = int(ExitCode.INTERRUPTED)
        elif isinstance(exc, click.ClickException):
            exc.show()
            code = int(ExitCode.USAGE)
        else:
            if state.get("debug"):
                import traceback

                traceback.print_exc()
            code = _report(exc)
    if argv is None:
        sys.exit(code)
    return code


if __name__ == "__main__":
    main()
