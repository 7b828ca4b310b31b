"""Answer a list of questions with the ragcli found on PYTHONPATH and record what `rag ask`
would print: one JSON line per question, written to --out.

bench_answers2.py starts this once per checkout (this tree, and the baseline with
``--baseline``), each with its own PYTHONPATH, so before and after run the same way in the
same bench run. It touches only what every revision since wave 2 has: ``pipeline.index``,
``pipeline.answer.answer``, ``retrieve.Searcher``, ``generate.make_generator`` and
``render.print_answer``; keyword arguments a revision does not take are left out.

The index of each vault is shared between checkouts when the index fingerprints agree (the
first checkout builds it, the next one finds every file unchanged); a checkout whose
embedder or chunker differs gets IndexMismatchError there and builds its own.
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def index_home(homes: Path, label: str, corpus: str, folder: Path) -> Path:
    from ragcli.config import load_config
    from ragcli.pipeline import index

    for home in (homes / "shared" / corpus, homes / label / corpus):
        os.environ["RAG_HOME"] = str(home)
        t0 = time.perf_counter()
        try:
            report = index(load_config(), [folder])
        except Exception as exc:  # the checkout's own IndexMismatchError class: compare by name
            if type(exc).__name__ != "IndexMismatchError":
                raise
            print(f"# {label} {corpus}: shared index has another fingerprint, building its own", file=sys.stderr)
            continue
        print(f"# {label} index {corpus} in {home}: {report.files_indexed} indexed, {report.files_unchanged} "
              f"unchanged ({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
        return home
    raise SystemExit(f"{label}: could not index {corpus}")


def rendered(result) -> tuple[str, str]:
    """What `rag ask` prints for this answer when stdout is not a terminal: (stdout, stderr)."""
    from ragcli import render

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        render.reset_consoles()
        try:
            render.print_answer(result, streamed=False)
        except TypeError:
            render.print_answer(result)
    finally:
        sys.stdout, sys.stderr = saved
        render.reset_consoles()
    return out.getvalue(), err.getvalue()


def quote_json(q) -> dict:
    data = q.to_json() if hasattr(q, "to_json") else dict(vars(q))
    return {k: data.get(k) for k in ("n", "text", "kind", "path", "title", "heading", "context",
                                     "line_start", "line_end")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--homes", type=Path, required=True)
    ap.add_argument("--corpus", action="append", default=[], help="NAME=FOLDER")
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--model")
    ap.add_argument("--quotes-only", action="store_true")
    args = ap.parse_args()

    from ragcli.config import load_config
    from ragcli.pipeline.answer import answer
    from ragcli.retrieve import Searcher

    folders = dict(c.split("=", 1) for c in args.corpus)
    rows = json.loads(args.questions.read_text())
    accepted = set(inspect.signature(answer).parameters)
    overrides = {"llm_model": args.model} if args.model else {}
    generator = None
    with args.out.open("w", encoding="utf-8") as out:
        for corpus, folder in folders.items():
            todo = [r for r in rows if r["corpus"] == corpus]
            if not todo:
                continue
            index_home(args.homes, args.label, corpus, Path(folder))
            config = load_config(overrides)
            if generator is None and not args.quotes_only:
                from ragcli.generate import make_generator

                generator = make_generator(config)
            searcher = Searcher(config)
            for i, row in enumerate(todo, 1):
                seen: dict[str, float] = {}
                t0 = time.perf_counter()
                kwargs = {"generator": generator, "searcher": searcher, "quotes_only": args.quotes_only,
                          "on_quotes": lambda _q: seen.setdefault("quotes", time.perf_counter() - t0),
                          "on_token": lambda _t: seen.setdefault("token", time.perf_counter() - t0)}
                result = answer(config, row["question"], **{k: v for k, v in kwargs.items() if k in accepted})
                total = time.perf_counter() - t0
                stdout, stderr = rendered(result)
                timings = dict(getattr(result, "timings", {}) or {})
                record = {
                    "id": row["id"], "label": args.label,
                    "covered": bool(getattr(result, "covered", True)),
                    "answer": getattr(result, "text", "") or "",
                    "generated": getattr(result, "generated", "") or "",
                    "quotes": [quote_json(q) for q in (getattr(result, "quotes", None) or [])],
                    "sources": [getattr(s, "path", "") for s in (getattr(result, "sources", None) or [])],
                    "cited": list(getattr(result, "cited", []) or []),
                    "dropped": len(getattr(result, "dropped", []) or []),
                    "stdout": stdout, "stderr": stderr,
                    "first_quote_s": seen.get("quotes", timings.get("quotes_s")),
                    "first_token_s": seen.get("token", timings.get("first_token_s")),
                    "total_s": total, "model": getattr(result, "model", ""),
                }
                out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
                out.flush()
                if i % 20 == 0:
                    print(f"# {args.label} {corpus}: {i}/{len(todo)}", file=sys.stderr)
            searcher.close()
    if generator is not None:
        generator.close()


if __name__ == "__main__":
    main()
