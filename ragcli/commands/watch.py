"""`rag watch`: keep the index in sync as notes change, and answer search/ask warm.

    rag watch [PATH...]            foreground (systemd, launchd, a terminal); Ctrl-C stops it
    rag watch --detach [PATH...]   in the background; returns once it has started
    rag watch --status             is one running? pid, since, socket, log
    rag watch --stop               SIGTERM to the running one, and wait for it to end

The actions are flags, not subcommands, so that `rag watch stop` can never mean two things
(a folder named "stop" stays a folder).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import typer

from ..app import app
from ..config import load_config
from .options import GPU


@app.command("watch")
def watch_cmd(
    paths: List[Path] = typer.Argument(None, help="Folders to watch (default: the ones indexed before)."),
    detach: bool = typer.Option(False, "--detach", help="Run in the background (log in the index folder) "
                                "and return once it has started."),
    stop: bool = typer.Option(False, "--stop", help="Stop the running watcher and wait for it to end."),
    status: bool = typer.Option(False, "--status", help="Show the running watcher, if any."),
    debounce: Optional[float] = typer.Option(
        None, "--debounce", help="Seconds a file must stay quiet before it is re-indexed (default 1)."),
    reconcile_interval: Optional[float] = typer.Option(
        None, "--reconcile-interval", help="Seconds between full checks against the disk (default 300)."),
    polling: bool = typer.Option(False, "--polling", help="Poll the disk instead of OS events "
                                 "(network drives; used automatically when inotify runs out)."),
    no_serve: bool = typer.Option(False, "--no-serve", help="Do not answer search/ask/status on the "
                                  "socket (they then always work in their own process)."),
    no_prefill: bool = typer.Option(False, "--no-prefill", help="Do not embed notes' passages ahead of "
                                    "questions when idle (setting watch_prefill; default auto: on "
                                    "unless embed_url is set)."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds --stop waits for the watcher to end."),
    gpu_layers: Optional[int] = GPU,
    log_file: Optional[Path] = typer.Option(None, "--log-file", help="Also append the log to this file."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log every event and file."),
    as_json: bool = typer.Option(False, "--json", help="With --detach, --stop or --status: print JSON."),
    print_service: Optional[str] = typer.Option(
        None, "--print-service", metavar="systemd|launchd",
        help="Print a service file that runs this watcher, and exit."),
    background: bool = typer.Option(False, "--background", hidden=True,
                                    help="(internal) the detached process itself."),
) -> None:
    """Watch notes folders, keep the index in sync, and answer search/ask warm while running."""
    from ..errors import UsageError

    config = load_config({"debounce": debounce, "reconcile_interval": reconcile_interval,
                          "n_gpu_layers": gpu_layers, "watch_prefill": "off" if no_prefill else None})
    extra = _extra_args(debounce, reconcile_interval, polling, gpu_layers, no_prefill)  # for a process run anew
    actions = [name for name, on in (("--detach", detach), ("--stop", stop), ("--status", status),
                                     ("--print-service", print_service)) if on]
    if len(actions) > 1:
        raise UsageError(f"{' and '.join(actions)} cannot be used together")
    if (stop or status) and paths:
        raise UsageError(f"{actions[0]} takes no folder", hint=f"Run: rag watch {actions[0]}")
    if print_service:
        _print_service(config, paths, print_service, extra)
        return
    if stop or status:
        _stop(config, timeout, as_json) if stop else _status(config, as_json)
        return
    if config.debounce < 0 or config.reconcile_interval <= 0:
        raise UsageError("--debounce must be >= 0 and --reconcile-interval > 0")
    _check_folders(paths)
    if detach:
        _detach(config, paths, extra, no_serve, verbose, as_json)
        return
    from ..watch import WatchOptions, watch
    from ..watch.background import setup_logging

    used = setup_logging(config, verbose, log_file, background=background)
    watch(config, paths or None, WatchOptions(debounce=config.debounce,
                                              reconcile_interval=config.reconcile_interval,
                                              polling=polling, serve=not no_serve, log_file=used))


def _check_folders(paths) -> None:
    """`rag watch stop` names a folder "stop": say what was probably meant."""
    from ..errors import UsageError

    for p in paths or []:
        if not p.expanduser().exists() and str(p) in ("stop", "status", "start"):
            flag = "--detach" if str(p) == "start" else f"--{p}"
            raise UsageError(f"{p}: no such folder", hint=f"To {p} the background watcher: rag watch {flag}")


def _extra_args(debounce, reconcile_interval, polling, gpu_layers, no_prefill=False) -> list[str]:
    extra = []
    if debounce is not None:
        extra += ["--debounce", f"{debounce:g}"]
    if reconcile_interval is not None:
        extra += ["--reconcile-interval", f"{reconcile_interval:g}"]
    if gpu_layers is not None:
        extra += ["--gpu-layers", str(gpu_layers)]
    if polling:
        extra.append("--polling")
    if no_prefill:
        extra.append("--no-prefill")
    return extra


def _detach(config, paths, extra: list[str], no_serve, verbose, as_json) -> None:
    from .. import render
    from ..watch.background import start_detached

    args = extra + (["--no-serve"] if no_serve else [])
    args += ["--verbose"] if verbose else []
    info = start_detached(config, [p.expanduser() for p in paths or []], args)
    if as_json:
        render.print_json(info)
        return
    state = "starting (still indexing)" if info["starting"] else "started"
    render.err().print(f"rag watch: {state} in the background, pid {info['pid']}")
    render.err().print(f"  log:    {info['log']}")
    if info["socket"]:
        render.err().print(f"  socket: {info['socket']}")
    render.err().print("  stop:   rag watch --stop")


def _stop(config, timeout: float, as_json: bool) -> None:
    from .. import render
    from ..watch.background import stop_watcher

    result = stop_watcher(config, timeout)
    if as_json:
        render.print_json(result)
    elif result["stopped"]:
        render.err().print(f"rag watch: stopped (pid {result['stopped']}, {result['seconds']:.1f}s)")
    else:
        render.err().print("No watcher is running.")


def _status(config, as_json: bool) -> None:
    import time

    from .. import render
    from ..maintenance.status import passages_line, watcher_info

    info = watcher_info(config)
    if as_json:
        render.print_json({"running": info is not None, **(info or {})})
        return
    o = render.out()
    if info is None:
        o.print("No watcher is running.")
        return
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("since") or 0))
    o.print(f"Watcher:  pid {info.get('pid')}, since {since}, {info.get('state', '?')}, "
            f"{info.get('pending', 0)} pending")
    if info.get("passages"):
        o.print(f"Passages: {passages_line(info['passages'])}")
    o.print(f"Roots:    {', '.join(info.get('roots') or []) or '-'}")
    o.print(f"Socket:   {info.get('socket') or '-'}{'' if info.get('answering') else ' (not answering)'}")
    o.print(f"Log:      {info.get('log') or 'stderr (foreground)'}")


def _print_service(config, paths, kind, extra: list[str]) -> None:
    from ..render import out
    from ..watch import service_file

    roots = [Path(os.path.abspath(p.expanduser())) for p in paths] if paths else _remembered_roots(config)
    out().file.write(service_file(kind, roots, extra))


def _remembered_roots(config) -> list[Path]:
    from ..errors import UsageError
    from ..pipeline import remembered_roots

    roots = remembered_roots(config)
    if not roots:
        raise UsageError("no folder to watch yet", hint="Name it: rag watch --print-service systemd ~/notes")
    return [Path(r) for r in roots]
