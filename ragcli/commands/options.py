"""Options that `rag ask` and `rag chat` share, mapped onto Config fields."""

from __future__ import annotations

import typer

MODEL = typer.Option(None, "--model", help="GGUF generation model file (or the server's model name with llm_url).")
TEMPERATURE = typer.Option(None, "--temperature", help="Sampling temperature (0 = greedy).")
MAX_TOKENS = typer.Option(None, "--max-tokens", help="Most tokens in an answer.")
CTX = typer.Option(None, "--ctx", help="Context window in tokens.")
THREADS = typer.Option(None, "--threads", help="CPU threads (0 = all cores).")
GPU = typer.Option(None, "--gpu-layers", "--n-gpu-layers",
                   help="Layers of each model to offload to the GPU (-1 = all, when llama.cpp has a GPU backend; "
                        "0 = CPU only).")
K = typer.Option(None, "-k", "--top-k", help="Chunks to retrieve.")
MODE = typer.Option(None, "--mode", help="Retrieval: hybrid, vector or keyword.")
MIN_SCORE = typer.Option(None, "--min-score", help="Relevance threshold on the best cosine (< 0: calibrated default).")
JSON = typer.Option(False, "--json", help="Print JSON (one object per question for chat).")
