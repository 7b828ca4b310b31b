"""The running watcher as a warm server: search, ask and status over a Unix socket.

- ``protocol``: the wire format (newline-delimited JSON), request checks, the socket's path;
- ``client``: what the commands call first (``daemon_search``, ``daemon_answer``,
  ``daemon_status``): None when no watcher answers, so the caller works in process;
- ``server``: the socket in a thread of the watcher, and the ``Engine`` it keeps warm.

Nothing heavy is imported here or by ``client``/``protocol``: the client runs before the
command decides whether to load chromadb and the models itself.
"""
