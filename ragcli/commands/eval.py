"""`rag eval`: retrieval quality on a BEIR folder, in a throwaway cached index."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..app import app
from ..config import load_config


@app.command("eval")
def eval_cmd(
    dataset: Path = typer.Argument(..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv."),
    mode: Optional[str] = typer.Option(None, "--mode", help="hybrid (default), vector or keyword."),
    run_file: Optional[Path] = typer.Option(None, "--run-file", help="Write a TREC run (100 docs per query) here."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir",
                                             help="Where eval indexes are kept (default: the cache folder)."),
    embed_model: Optional[str] = typer.Option(None, "--embed-model", help="GGUF embedding model file."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON."),
) -> None:
    """Measure retrieval (nDCG@10, recall@10/100, MRR@10, speed) on a BEIR data set.

    The corpus goes into its own index under the cache folder, keyed by the corpus and the
    embedding/chunking settings: your index is never touched, and a second run re-embeds nothing.
    """
    from .. import render
    from ..maintenance.eval import evaluate

    config = load_config({"embed_model": embed_model})
    with render.progress_reporter() as progress:
        report = evaluate(config, dataset, mode=mode or "hybrid", run_file=run_file, progress=progress,
                          cache_root=cache_dir)
    if as_json:
        render.print_json(report.to_json())
        return
    o = render.out()
    o.print(f"{report.dataset}: {report.queries} queries, {report.docs} docs ({report.chunks} chunks), "
            f"mode {report.mode}")
    o.print(f"nDCG@10 {report.ndcg_10:.4f}   recall@10 {report.recall_10:.4f}   "
            f"recall@100 {report.recall_100:.4f}   MRR@10 {report.mrr_10:.4f}")
    rate = (f", {report.embedded / report.index_seconds:.1f} chunks/s"
            if report.embedded and report.index_seconds else "")
    o.print(f"index {report.index_seconds:.1f}s ({report.embedded} chunks embedded{rate}); "
            f"query p50 {report.query_ms_p50:.1f} ms, p95 {report.query_ms_p95:.1f} ms")
    if run_file:
        render.err().print(f"run written to {run_file}")
