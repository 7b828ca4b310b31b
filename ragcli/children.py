"""Starting ragcli again in another interpreter (``python -m ragcli.<module>``, never a fork:
the parent may hold threads): where that interpreter finds the package.

The parse worker, the detached watcher and a service file all need it: a source checkout
is found only through the current folder, which a child started elsewhere (or a service
manager) does not share, so it gets PYTHONPATH; an installed package needs nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE_PARENT = Path(__file__).resolve().parents[1]  # the folder that holds ragcli/


def package_on_path() -> bool:
    """Whether a new interpreter finds ragcli by itself: the folder holding it is on sys.path
    other than as the current folder (sys.path[0])."""
    return any(p and Path(p).resolve() == PACKAGE_PARENT for p in sys.path[1:])


def child_env(**extra: str) -> dict[str, str]:
    """This environment (plus ``extra``), with PYTHONPATH naming ragcli's folder when needed."""
    env = dict(os.environ, **extra)
    if not package_on_path():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_PARENT), env.get("PYTHONPATH")]))
    return env
