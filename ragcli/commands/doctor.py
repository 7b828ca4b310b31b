"""`rag doctor`: check the setup, each problem with its fix."""

from __future__ import annotations

import typer

from ..app import app
from ..config import load_config


@app.command("doctor")
def doctor_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    no_load: bool = typer.Option(False, "--no-load", help="Do not load the generation model."),
) -> None:
    """Check the installation: llama.cpp build, models, index, versions; each problem with its fix."""
    from .. import render
    from ..maintenance.doctor import FAIL, WARN, diagnose, exit_code

    config = load_config()
    checks = diagnose(config, load_models=not no_load)
    code = exit_code(checks)
    if as_json:
        render.print_json({"ok": code == 0, "checks": [c.to_json() for c in checks]})
    else:
        console = render.out()
        area = None
        for c in checks:
            if c.area != area:
                area = c.area
                console.print(area, style="bold")
            mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL"}[c.status]
            style = "red" if c.status == FAIL else ("yellow" if c.status == WARN else None)
            console.print(f"  {mark} {c.name}: {render.clean(c.detail)}", style=style)
            if c.fix and c.status != "ok":
                console.print(f"       fix: {render.clean(c.fix)}", style="dim")
        if code == 0:
            console.print("All good.")
    if code:
        from ..errors import RagError

        failed = [c.name for c in checks if c.status == FAIL]
        error = RagError(f"{len(failed)} check(s) failed: {', '.join(failed)}",
                         hint="Each FAIL above comes with its fix." if not as_json else
                         "Each failed check in the JSON comes with its fix.")
        error.exit_code = code  # the failing area's code (5 for a model, ...)
        raise error
