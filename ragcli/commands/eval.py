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
    from ..eval import evaluate

    config = load_config({"embed_model": embed_model})
    with _EvalProgress() as progress:
        report = evaluate(config, dataset, mode=mode or "hybrid", run_file=run_file, progress=progress,
                          cache_root=cache_dir)
    if as_json:
        render.print_json(report.as_dict())
        return
    o = render.out()
    o.print(f"{report.dataset}: {report.queries} queries, {report.docs} docs ({report.chunks} chunks), "
            f"mode {report.mode}")
    o.print(f"nDCG@10 {report.ndcg_10:.4f}   recall@10 {report.recall_10:.4f}   "
            f"recall@100 {report.recall_100:.4f}   MRR@10 {report.mrr_10:.4f}")
    rate = f", {report.embedded / report.index_seconds:.1f} chunks/s" if report.embedded and report.index_seconds else ""
    o.print(f"index {report.index_seconds:.1f}s ({report.embedded} chunks embedded{rate}); "
            f"query p50 {report.query_ms_p50:.1f} ms, p95 {report.query_ms_p95:.1f} ms")
    if run_file:
        render.err().print(f"run written to {run_file}")


class _EvalProgress:
    """Indexing and query progress on stderr (only on a terminal)."""

    def __init__(self):
        from .. import render

        self.render = render
        self.bar = None
        self.done = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._close(*exc)
        return False

    def _close(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*(exc or (None, None, None)))
            self.bar = None

    def _open(self, total: int, description: str, unit: str):
        self._close()
        self.done = 0
        self.bar = self.render.progress(total=total, description=description, unit=unit).__enter__()

    def __call__(self, event: str, data: dict) -> None:
        if event == "message":
            self.render.info(data["text"])
        elif event == "start" and data["total"]:
            self._open(data["total"], "Indexing corpus", "docs")
        elif event == "docs" and self.bar is not None:
            self.bar.update(advance=data["done"] - self.done, extra=f"{data['embedded']} chunks embedded")
            self.done = data["done"]
        elif event == "query":
            if data["done"] == 1:
                self._open(data["total"], "Queries", "queries")
            if self.bar is not None:
                self.bar.update(advance=1)
