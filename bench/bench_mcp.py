"""Figures for `rag mcp`: how soon an agent gets its first search, and a warm search's cost.
Never asserts.

    python bench/bench_mcp.py                # examples/vault, indexed in a temp RAG_HOME
    python bench/bench_mcp.py --help-vault   # the Obsidian help vault (../shared/corpora)

Uses the index under RAG_HOME when it holds one. Starts the real server
(`python -m ragcli.cli mcp`) and drives it with the official SDK's stdio client, as an
agent's host would, and prints:
- start -> initialize answered, and start -> first `search` answered (the index and the
  embedding model load in the background as the session starts; the first search waits
  for them);
- a warm `search` (median and 90th percentile over the rounds);
- the baseline, measured in the same run: a one-shot `rag search --json` process per query
  (Python start, imports, index and model load, search), and the ratio of the two.
Timings are from one shared, noisy machine: compare the ratio, not absolute seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HELP_VAULT = ROOT.parent / "shared" / "corpora" / "obsidian-help" / "en"
QUERIES = ["how long should a pour over take", "drip irrigation pressure", "sourdough starter feeding",
           "dense passage retrieval", "git rebase", "python packaging wheels", "lisbon tram",
           "espresso ratio", "how do I link to a heading", "callouts"]


def _env(home: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_HOME=home, PYTHONPATH=str(ROOT), OMP_WAIT_POLICY="PASSIVE", ANONYMIZED_TELEMETRY="False")
    if "RAG_MODELS_DIR" in os.environ:
        env["RAG_MODELS_DIR"] = os.environ["RAG_MODELS_DIR"]
    return env


async def _drive(env: dict[str, str], rounds: int) -> dict[str, float | list[float]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "ragcli.cli", "mcp"], env=env)
    figures: dict[str, float | list[float]] = {}
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            figures["initialize_s"] = time.perf_counter() - started
            result = await session.call_tool("search", {"query": QUERIES[0], "k": 5})
            figures["first_search_s"] = time.perf_counter() - started
            if result.is_error:
                raise SystemExit(f"search failed: {result.content[0].text}")
            warm = []
            for n in range(rounds):
                t = time.perf_counter()
                await session.call_tool("search", {"query": QUERIES[n % len(QUERIES)], "k": 5})
                warm.append(time.perf_counter() - t)
            figures["warm"] = warm
    return figures


def _one_shot(env: dict[str, str], query: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ragcli.cli", "search", query, "-k", "5", "--json"], env=env,
                   check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--help-vault", action="store_true", help="index the Obsidian help vault")
    parser.add_argument("--rounds", type=int, default=30, help="warm searches to time")
    parser.add_argument("--one-shots", type=int, default=3, help="one-shot `rag search` runs to time")
    args = parser.parse_args()

    from ragcli.config import load_config
    from ragcli.store import index_exists

    home = os.environ.get("RAG_HOME")
    if not home or not index_exists(load_config()):
        from ragcli.pipeline import index

        home = tempfile.mkdtemp(prefix="bench-mcp-")
        vault = HELP_VAULT if args.help_vault else ROOT / "examples" / "vault"
        print(f"indexing {vault} into {home} ...", file=sys.stderr)
        index(load_config(env=_env(home)), [vault])
    env = _env(home)
    _one_shot(env, QUERIES[0])  # the OS file cache warm for both sides
    figures = anyio.run(_drive, env, args.rounds)
    shots = [_one_shot(env, QUERIES[n % len(QUERIES)]) for n in range(args.one_shots)]
    warm = sorted(figures["warm"])
    median, p90 = statistics.median(warm), warm[int(0.9 * (len(warm) - 1))]
    one_shot = statistics.median(shots)
    print(f"start -> initialize answered:    {figures['initialize_s']:.2f} s")
    print(f"start -> first search answered:  {figures['first_search_s']:.2f} s")
    print(f"warm search (MCP), {len(warm)} calls:   median {median * 1000:.1f} ms, p90 {p90 * 1000:.1f} ms")
    print(f"one-shot `rag search` process:   median {one_shot:.2f} s over {len(shots)}")
    print(f"ratio one-shot / warm search:    {one_shot / median:.0f}x")


if __name__ == "__main__":
    main()
