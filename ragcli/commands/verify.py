"""`rag verify [--repair] [--json]`: check the index (an fsck), and repair it."""

from __future__ import annotations

import typer

from ..app import app
from ..config import load_config

MAX_LISTED = 50  # problems printed one per line; --json lists them all


@app.command("verify")
def verify_cmd(
    repair: bool = typer.Option(False, "--repair", help="Fix what is found (re-index files, rebuild stores)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Check the index against the disk and itself; exit 8 with a list of problems if not sound."""
    from .. import render
    from ..errors import VerifyFailed
    from ..maintenance.verify import repair as repair_index
    from ..maintenance.verify import verify

    config = load_config()
    with render.progress_reporter() as progress:
        say = progress if render.stderr_is_terminal() else None
        report = verify(config, progress=say)
        if repair and not report.ok:
            report = repair_index(config, report, progress=say)
    if as_json:
        render.print_json(report.to_json())
    else:
        _print(report)
    if not report.ok:
        raise VerifyFailed(f"{len(report.problems)} problem(s) in the index at {config.index_dir}",
                           hint=None if not repair else "Run `rag index --rebuild` to start over.")


def _print(report) -> None:
    from ..render import clean, err, out

    for action in report.repaired:
        err().print(f"repaired: {clean(action)}")
    if report.ok:
        out().print(f"OK: {report.files} files, {report.chunks} chunks, {report.vectors} vectors; "
                    "manifest, keyword index and vector store agree with each other and the disk.")
        if report.pending:
            out().print(f"{report.pending} of {report.chunks} chunks have no vector yet (keyword search finds "
                        "them): `rag index` embeds them.")
        return
    for problem in report.problems[:MAX_LISTED]:
        where = f" {clean(problem.path)}:" if problem.path else ""
        out().print(f"{problem.kind}:{where} {clean(problem.detail)}")
    if len(report.problems) > MAX_LISTED:
        out().print(f"... and {len(report.problems) - MAX_LISTED} more (see --json)")
    if report.writer_active:
        err().print("note: another process was writing the index while it was checked.")
