"""`rag watch`: a daemon that keeps the index in sync as notes change, and answers warm.

- ``changes``: which file events matter, and per-path debouncing between two threads;
- ``observe``: watchdog's observer, with the fallback to polling when inotify runs out;
- ``daemon``: the ``Watcher`` (lock, start-up reconcile, sync loop, signals, state and pid
  files, the socket of ``ragcli.serve``);
- ``background``: ``--detach`` (a new session, logs in the index folder), ``--stop``;
- ``files``: the files a watcher keeps in the index folder;
- ``service``: the systemd unit / launchd plist printed by ``--print-service``.

watchdog is imported only inside functions: ``import ragcli.cli`` must stay light.
"""

from .daemon import Watcher, WatchOptions, watch
from .service import service_file

__all__ = ["Watcher", "WatchOptions", "service_file", "watch"]
