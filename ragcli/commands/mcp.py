"""`rag mcp`: serve the notes to an agent over MCP (stdio)."""

from __future__ import annotations

from typing import Optional

from ..app import app
from .options import CTX, GPU, K, MAX_TOKENS, MIN_SCORE, MODE, MODEL, TEMPERATURE, THREADS
from .run import answer_config


@app.command("mcp")
def mcp_cmd(
    model: Optional[str] = MODEL, temperature: Optional[float] = TEMPERATURE,
    max_tokens: Optional[int] = MAX_TOKENS, ctx: Optional[int] = CTX,
    threads: Optional[int] = THREADS, gpu_layers: Optional[int] = GPU,
    k: Optional[int] = K, mode: Optional[str] = MODE, min_score: Optional[float] = MIN_SCORE,
) -> None:
    """Serve the notes to an agent as MCP tools (search, ask, get, status) on stdin/stdout.

    Started by an MCP client (Claude Desktop, an IDE, an agent framework), not by hand:
    it reads JSON-RPC on stdin until the client closes it. The tools only read the index.
    """
    from .. import render
    from ..serve.mcp import serve

    config = answer_config(model, temperature, max_tokens, ctx, threads, gpu_layers, k, mode, min_score)
    render.err().print(f"rag mcp: serving the index at {config.index_dir} on stdio "
                       "(tools: search, ask, get, status)", style="dim")
    serve(config)
