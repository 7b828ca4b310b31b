"""Figures for `rag ask` on the Obsidian help vault with the default model. Never asserts.

    python bench/bench_ask.py                 # TTFT before/after the levers, tokens/s
    python bench/bench_ask.py --calibrate     # relevance gate: answerable vs unanswerable
    python bench/bench_ask.py --follow-ups    # chat: follow-up retrieval, plain vs combined

Uses the index under RAG_HOME when it holds one, else builds one of the vault in a temp
RAG_HOME first (minutes). Each question is answered as a cold `rag ask` would: a fresh
generator (model load included) and a one-shot search (embedder load included); only the
Python imports are shared. Timings are from one shared, noisy machine: compare the ratios
of the two configurations run here, not absolute seconds.

"before": the naive pipeline: top 5 chunks whole, no trimming, the system prompt evaluated
each time, the model loaded after retrieval.
"after": what `rag ask` ships: <= 4 sources trimmed to the lines about the question within
a 380-token budget, the system prompt's KV state restored from disk, the model loaded in
a thread while retrieval runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
VAULT = ROOT.parent / "shared" / "corpora" / "obsidian-help" / "en"

ANSWERABLE = [
    ("How can I show the contents of one note inside another note?", "Linking notes and files/Embed files.md"),
    ("How do I make a callout foldable?", "Editing and formatting/Callouts.md"),
    ("How do I add an alias to a note?", "Linking notes and files/Aliases.md"),
    ("How do I link to a heading in another note?", "Linking notes and files/Internal links.md"),
    ("How do I add tags to a note?", "Editing and formatting/Tags.md"),
    ("How can I sync my vault between devices?", "Obsidian Sync"),
    ("How do I create a table in Markdown?", "Editing and formatting/Advanced formatting syntax.md"),
    ("What are properties in a note?", "Editing and formatting/Properties.md"),
    # paraphrases that share few words with the notes
    ("Can I see which notes point to the one I'm reading?", "Backlinks"),
    ("Is there a dark theme?", "Themes"),
    ("Can I put my notes on a public website?", "Obsidian Publish"),
    ("Can I use it on my phone?", "Mobile"),
    ("How do I bring in my notes from Notion?", "Import notes"),
    ("Where does it keep its settings?", "Configuration folder"),
]
UNANSWERABLE = [
    "What is the capital of Australia?",
    "How do I configure a VLAN on a Cisco switch?",
    "What is the boiling point of water at sea level?",
    "Who won the 2018 FIFA World Cup?",
    "How do I bake sourdough bread?",
    "How do I declare a pointer in C++?",
    "What is the best diet for a cat?",
    "How do I change the oil in my car?",
    "How do I set up a Python virtual environment?",
    "What is the weather like in Paris in May?",
    "How do I file my taxes?",
    "Explain the theory of relativity.",
]
FOLLOW_UPS = [
    ("How do I create a callout?", "And how do I make it foldable?", "Callouts.md"),
    ("How do I embed a note in another note?", "What about images?", "Embed files.md"),
    ("How do I add an alias to a note?", "Can I link to it with that name?", "Aliases.md"),
    ("How do I use tags?", "Can they be nested?", "Tags.md"),
    ("What is Obsidian Sync?", "How much does it cost?", "Sync"),
]


def config_for_vault():
    from ragcli.config import load_config
    from ragcli.store import index_exists

    config = load_config()
    if not os.environ.get("RAG_HOME") or not index_exists(config):
        home = Path(tempfile.mkdtemp(prefix="bench-ask-"))
        os.environ["RAG_HOME"] = str(home)
        config = load_config()
        from ragcli.pipeline import index

        print(f"building an index of {VAULT} in {home} ...", file=sys.stderr)
        t = time.perf_counter()
        index(config, [VAULT])
        print(f"  {time.perf_counter() - t:.1f}s", file=sys.stderr)
    return config


def run_config(config, name: str, questions, *, naive: bool) -> list[dict]:
    from ragcli import generate
    from ragcli.generate import prompt
    from ragcli.pipeline.answer import answer, answer_from_hits
    from ragcli.retrieve import search

    rows = []
    cache_dir = None if naive else Path(config.data_dir) / "cache"
    saved = (prompt.SOURCE_TOKENS, prompt.CONTEXT_TOKENS, prompt.MAX_SOURCES)
    if naive:
        prompt.SOURCE_TOKENS, prompt.CONTEXT_TOKENS, prompt.MAX_SOURCES = 10_000, 100_000, 5
    try:
        for question, expected in questions:
            from ragcli.models.resolve import resolve_llm_model

            started = time.perf_counter()
            gen = generate.LlamaGenerator(resolve_llm_model(config).path, n_ctx=config.n_ctx,
                                          n_threads=config.n_threads, cache_dir=cache_dir)
            if naive:  # retrieval, then the model, one after the other
                hits = search(config, question, k=config.top_k, mode=config.mode)
                retrieve_s = time.perf_counter() - started
                result = answer_from_hits(config, question, hits, gen, started=started, retrieve_s=retrieve_s)
            else:  # what `rag ask` does
                result = answer(config, question, generator=gen)
                retrieve_s = result.timings["retrieve_s"]
            gen.close()
            t = result.timings
            gen_s = (t["total_s"] or 0) - (t["first_token_s"] or 0)
            rows.append({"config": name, "question": question, "prompt_tokens": result.prompt_tokens,
                         "completion_tokens": result.completion_tokens, "retrieve_s": retrieve_s,
                         "first_token_s": t["first_token_s"], "total_s": t["total_s"],
                         "tok_s": (result.completion_tokens - 1) / gen_s if gen_s > 0 and result.completion_tokens > 1 else None,
                         "expected_found": any(expected in s.path for s in result.sources),
                         "cited": bool(result.cited), "sources": len(result.sources),
                         "prefix_cached": gen.prefix_cached})
    finally:
        prompt.SOURCE_TOKENS, prompt.CONTEXT_TOKENS, prompt.MAX_SOURCES = saved
    return rows


def machine_speed(config) -> float:
    """Prompt tokens/s of the default model right now: the yardstick for this run's TTFTs."""
    from ragcli.generate.llama import LlamaGenerator
    from ragcli.models.resolve import resolve_llm_model

    gen = LlamaGenerator(resolve_llm_model(config).path, n_ctx=1024, n_threads=config.n_threads)
    llm = gen.llm
    tokens = llm.tokenize(b"Obsidian stores notes as Markdown files in a vault. " * 40)[:300]
    started = time.perf_counter()
    llm.eval(tokens)
    speed = len(tokens) / (time.perf_counter() - started)
    gen.close()
    return speed


def bench_ttft(config, repeat: int) -> None:
    questions = ANSWERABLE[:5]
    speed = machine_speed(config)
    print(f"machine now: prompt processing {speed:.0f} tokens/s with {config.n_threads} threads "
          f"(load average {os.getloadavg()[0]:.1f}); a quiet 2-core machine does ~250-340")
    # warm the file cache and the prefix state once, so "after" measures a second-run user
    run_config(config, "warm-up", questions[:1], naive=False)
    table = []
    for r in range(repeat):
        table += run_config(config, "before", questions, naive=True)
        table += run_config(config, "after", questions, naive=False)
    print(f"{'config':<7} {'prompt':>6} {'retr s':>6} {'TTFT s':>6} {'tok/s':>6} {'total s':>7} "
          f"{'exp.src':>7} {'cited':>5}  question")
    for row in table:
        print(f"{row['config']:<7} {row['prompt_tokens']:>6} {row['retrieve_s']:>6.2f} "
              f"{row['first_token_s'] or float('nan'):>6.2f} {row['tok_s'] or float('nan'):>6.1f} "
              f"{row['total_s']:>7.2f} {str(row['expected_found']):>7} {str(row['cited']):>5}  {row['question'][:50]}")
    print()
    for name in ("before", "after"):
        rows = [r for r in table if r["config"] == name]
        med = lambda key: statistics.median([r[key] for r in rows if r[key] is not None])  # noqa: E731
        print(f"{name:<7} median prompt {med('prompt_tokens'):.0f} tokens, retrieval {med('retrieve_s'):.2f}s, "
              f"TTFT {med('first_token_s'):.2f}s, {med('tok_s'):.1f} tok/s, total {med('total_s'):.2f}s, "
              f"expected source kept {sum(r['expected_found'] for r in rows)}/{len(rows)}, "
              f"cited {sum(r['cited'] for r in rows)}/{len(rows)}")
    b = statistics.median([r["first_token_s"] for r in table if r["config"] == "before"])
    a = statistics.median([r["first_token_s"] for r in table if r["config"] == "after"])
    print(f"TTFT after/before: {a / b:.2f}")


def bench_calibrate(config) -> None:
    from ragcli.pipeline import answer as A
    from ragcli.retrieve import Searcher

    searcher = Searcher(config)
    print(f"{'kind':<12} {'cos@1':>6} {'cover':>5} {'fused':>6} {'decision':>9}  question")
    rows = []
    for kind, questions in (("answerable", [q for q, _ in ANSWERABLE]), ("unanswerable", UNANSWERABLE)):
        for q in questions:
            hits = searcher.search(q, config.top_k, config.mode)
            cos = max((h.vector_score for h in hits if h.vector_score is not None), default=float("nan"))
            cover = A.term_coverage(q, hits)
            ok = A.relevant(q, hits, -1.0)
            rows.append((kind, ok))
            print(f"{kind:<12} {cos:>6.3f} {cover:>5.2f} {hits[0].score if hits else 0:>6.3f} "
                  f"{'answer' if ok else 'refuse':>9}  {q}")
    searcher.close()
    ans = [ok for kind, ok in rows if kind == "answerable"]
    una = [ok for kind, ok in rows if kind == "unanswerable"]
    print(f"\nanswerable answered {sum(ans)}/{len(ans)}; unanswerable refused {len(una) - sum(una)}/{len(una)} "
          f"(rule: cos >= {A.MIN_COSINE}, or cos >= {A.LOW_COSINE} and coverage >= {A.MIN_TERM_COVERAGE})")


def bench_follow_ups(config) -> None:
    from ragcli.pipeline.chat import ChatSession
    from ragcli.retrieve import Searcher

    searcher = Searcher(config)
    session = ChatSession.__new__(ChatSession)  # only its query logic; no model needed
    print(f"{'plain':>5} {'comb.':>5}  follow-up (rank of the expected note in the top 5; - = absent)")
    better = 0
    for first, follow, expected in FOLLOW_UPS:
        from ragcli.pipeline.chat import Turn

        session.turns = [Turn(first, first, None)]
        combined, _ = ChatSession.retrieval_query(session, follow)

        def rank(q):
            for h in searcher.search(q, 5, config.mode):
                if expected in h.chunk.path:
                    return h.rank
            return None

        a, b = rank(follow), rank(combined)
        better += (b is not None) and (a is None or b <= a)
        print(f"{a or '-':>5} {b or '-':>5}  {first} -> {follow}")
    searcher.close()
    print(f"\ncombined query finds the expected note at least as well in {better}/{len(FOLLOW_UPS)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--follow-ups", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    config = config_for_vault()
    if args.calibrate:
        bench_calibrate(config)
    elif args.follow_ups:
        bench_follow_ups(config)
    else:
        bench_ttft(config, args.repeat)


if __name__ == "__main__":
    main()
