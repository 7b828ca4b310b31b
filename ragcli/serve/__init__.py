"""Serving the notes warm to other programs.

- ``mcp``, ``notes``: `rag mcp`, an MCP server for agents over one ``ragcli.Notes``, and the
  guarded note reader;
- ``protocol``, ``client``, ``server``: the running watcher's Unix socket (newline-delimited
  JSON: search, ask, status). ``client`` is what ``ragcli.Notes`` calls first (None when no watcher
  answers, so the caller works in process); ``server`` runs in a thread of the watcher.

Nothing heavy is imported here or by ``client``/``protocol``: the client runs before the
command decides whether to load chromadb and the models itself.
"""
