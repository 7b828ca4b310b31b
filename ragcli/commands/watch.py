"""`rag watch`: keep the index in sync as notes change (foreground, for systemd/launchd)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from ..app import app
from ..config import load_config


@app.command("watch")
def watch_cmd(
    paths: List[Path] = typer.Argument(None, help="Folders to watch (default: the ones indexed before)."),
    debounce: Optional[float] = typer.Option(
        None, "--debounce", help="Seconds a file must stay quiet before it is re-indexed (default 1)."),
    reconcile_interval: Optional[float] = typer.Option(
        None, "--reconcile-interval", help="Seconds between full checks against the disk (default 300)."),
    polling: bool = typer.Option(False, "--polling", help="Poll the disk instead of OS events "
                                 "(network drives; used automatically when inotify runs out)."),
    log_file: Optional[Path] = typer.Option(None, "--log-file", help="Also append the log to this file."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log every event and file."),
    print_service: Optional[str] = typer.Option(
        None, "--print-service", metavar="systemd|launchd",
        help="Print a service file that runs this watcher, and exit."),
) -> None:
    """Watch notes folders and keep the index in sync (foreground; stop with Ctrl-C or SIGTERM)."""
    config = load_config({"debounce": debounce, "reconcile_interval": reconcile_interval})
    if print_service:
        _print_service(config, paths, print_service, debounce, reconcile_interval, polling)
        return
    from ..errors import UsageError
    from ..watch import WatchOptions, watch

    if config.debounce < 0 or config.reconcile_interval <= 0:
        raise UsageError("--debounce must be >= 0 and --reconcile-interval > 0")
    _setup_logging(log_file, verbose)
    watch(config, paths or None, WatchOptions(debounce=config.debounce,
                                              reconcile_interval=config.reconcile_interval,
                                              polling=polling))


def _print_service(config, paths, kind, debounce, reconcile_interval, polling) -> None:
    from ..render import out
    from ..watch import service_file

    roots = [Path(os.path.abspath(p.expanduser())) for p in paths] if paths else _remembered_roots(config)
    extra = []
    if debounce is not None:
        extra += ["--debounce", f"{debounce:g}"]
    if reconcile_interval is not None:
        extra += ["--reconcile-interval", f"{reconcile_interval:g}"]
    if polling:
        extra.append("--polling")
    out().file.write(service_file(kind, roots, extra))


def _remembered_roots(config) -> list[Path]:
    from ..errors import UsageError
    from ..pipeline import remembered_roots

    roots = remembered_roots(config)
    if not roots:
        raise UsageError("no folder to watch yet", hint="Name it: rag watch --print-service systemd ~/notes")
    return [Path(r) for r in roots]


def _setup_logging(log_file: Optional[Path], verbose: bool) -> None:
    import logging
    import sys

    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%Y-%m-%d %H:%M:%S")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file is not None:
        log_file.expanduser().parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file.expanduser(), encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(fmt)
    for name, level in (("ragcli", logging.DEBUG if verbose else logging.INFO), ("watchdog", logging.WARNING)):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        for handler in handlers:
            logger.addHandler(handler)
        logger.propagate = False
