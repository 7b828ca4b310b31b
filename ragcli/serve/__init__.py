"""Serving the notes to other programs: an MCP server for agents (``mcp``), over the
protocol-free ``NoteTools`` (``tools``) and the guarded note reader (``notes``)."""
