"""`rag watch`: a foreground daemon that keeps the index in sync as notes change.

- ``changes``: which file events matter, and per-path debouncing between two threads;
- ``observe``: watchdog's observer, with the fallback to polling when inotify runs out;
- ``daemon``: the ``Watcher`` (lock, start-up reconcile, sync loop, signals, state file);
- ``service``: the systemd unit / launchd plist printed by ``--print-service``.

watchdog is imported only inside functions: ``import ragcli.cli`` must stay light.
"""

from .daemon import STATE_FILE, Watcher, WatchOptions, watch
from .service import KINDS as SERVICE_KINDS
from .service import service_file

__all__ = ["STATE_FILE", "SERVICE_KINDS", "Watcher", "WatchOptions", "service_file", "watch"]
