"""`rag watch --print-service systemd|launchd`: a unit or plist the user can install as is."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from ..children import PACKAGE_PARENT, package_on_path
from ..errors import UsageError

KINDS = ("systemd", "launchd")
LABEL = "io.github.ragcli.watch"
ENV_KEYS = ("RAG_HOME", "RAG_CONFIG")


def rag_command() -> tuple[list[str], dict[str, str]]:
    """How a service manager starts `rag` again: absolute paths, no PATH or cwd needed.

    Returns the command and any environment it needs (PYTHONPATH when ragcli runs from a
    source checkout rather than an installed package).
    """
    argv0 = Path(sys.argv[0])
    if argv0.name == "rag" and argv0.is_file():
        return [str(argv0.resolve())], {}
    found = shutil.which("rag")
    if found:
        return [os.path.abspath(found)], {}
    env = {} if package_on_path() else {"PYTHONPATH": str(PACKAGE_PARENT)}
    return [os.path.abspath(sys.executable), "-m", "ragcli.cli"], env


def service_file(kind: str, roots: Sequence[Path], extra_args: Sequence[str] = (),
                 env: dict[str, str] | None = None) -> str:
    env = dict(os.environ if env is None else env)
    command, command_env = rag_command()
    argv = [*command, "watch", *extra_args, *[str(r) for r in roots]]
    environment = {k: env[k] for k in ENV_KEYS if env.get(k)}
    environment.update(command_env)
    if kind == "systemd":
        return _systemd(argv, environment)
    if kind == "launchd":
        return _launchd(argv, environment, Path(env.get("HOME") or Path.home()))
    raise UsageError(f"unknown service kind {kind!r}", hint=f"Use one of: {', '.join(KINDS)}")


def _systemd_quote(word: str) -> str:
    if word and all(c.isalnum() or c in "/._-+=:,@" for c in word):
        return word.replace("%", "%%")
    inner = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{inner}"'


def _systemd(argv: list[str], environment: dict[str, str]) -> str:
    env_lines = "".join(f"Environment={_systemd_quote(f'{k}={v}')}\n" for k, v in environment.items())
    return f"""\
# ragcli watcher: keeps the notes index in sync as notes change.
# Install:  mkdir -p ~/.config/systemd/user && rag watch --print-service systemd \\
#             > ~/.config/systemd/user/rag-watch.service
#           systemctl --user daemon-reload && systemctl --user enable --now rag-watch
# Logs:     journalctl --user -u rag-watch -f
[Unit]
Description=ragcli: keep the notes index in sync (rag watch)
After=default.target

[Service]
Type=simple
ExecStart={" ".join(_systemd_quote(a) for a in argv)}
ExecReload=/bin/kill -HUP $MAINPID
{env_lines}Environment=PYTHONUNBUFFERED=1
# 7: another writer (a `rag index`) holds the index: try again later. 2/3: fix the command or config.
Restart=on-failure
RestartSec=15
RestartPreventExitStatus=2 3
KillSignal=SIGTERM
TimeoutStopSec=15
Nice=10
IOSchedulingClass=idle

[Install]
WantedBy=default.target
"""


def _launchd(argv: list[str], environment: dict[str, str], home: Path) -> str:
    def string(value: str) -> str:
        return f"<string>{escape(value)}</string>"

    args = "\n".join(f"        {string(a)}" for a in argv)
    env = "".join(f"        <key>{escape(k)}</key>\n        {string(v)}\n" for k, v in environment.items())
    env_block = f"    <key>EnvironmentVariables</key>\n    <dict>\n{env}    </dict>\n" if env else ""
    log_path = home / "Library" / "Logs" / "rag-watch.log"
    return f"""\
<?xml version="1.0" encoding="UTF-8"?>
<!-- ragcli watcher. Save as ~/Library/LaunchAgents/{LABEL}.plist, then run
       launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/{LABEL}.plist -->
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    {string(LABEL)}
    <key>ProgramArguments</key>
    <array>
{args}
    </array>
{env_block}    <key>RunAtLoad</key>
    <true/>
    <key>KeepAlive</key>
    <dict>
        <key>SuccessfulExit</key>
        <false/>
    </dict>
    <key>ThrottleInterval</key>
    <integer>15</integer>
    <key>ProcessType</key>
    {string("Background")}
    <key>StandardErrorPath</key>
    {string(str(log_path))}
</dict>
</plist>
"""
