"""`rag eval` on a tiny BEIR folder the test writes: metrics against hand-computed values,
the TREC run file, the vector cache across runs, and the user's own index left alone."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from pathlib import Path

import pytest

from ragcli.cli import main
from ragcli.maintenance.eval import load_beir, mrr, ndcg, percentile, recall, write_run

ROOT = Path(__file__).resolve().parents[1]

DOCS = {
    "d1": ("Resetting a forgotten password", "If you cannot sign in, open Settings and choose Reset password; "
           "a link arrives by email and stays valid for one hour."),
    "d2": ("Error code E4021", "E4021 means the sync server rejected the upload because the vault is over quota. "
           "Delete large attachments or upgrade the plan."),
    "d3": ("Error code E4012", "E4012 appears when the device clock is wrong; fix the system time and retry."),
    "d4": ("Keyboard shortcuts", "Press Ctrl+P to open the command palette and Ctrl+O to open a note quickly."),
    "d5": ("Backing up a vault",
           "Copy the whole vault folder to another disk, or let a backup tool snapshot it daily."),
    "d6": ("Tomato growing", "Tomatoes need full sun, deep watering twice a week and a stake once they flower."),
    "d7": ("Pruning roses", "Cut roses back in late winter, just above an outward-facing bud."),
    "d8": ("Sourdough starter", "Feed the starter equal weights of flour and water every day until it doubles."),
    "d9": ("Bread baking temperatures", "Bake a sourdough loaf at 250 C with steam, then lower to 220 C."),
    "d10": ("Bicycle chain care", "Clean the chain with a degreaser, dry it, then oil each link sparingly."),
    "d11": ("Marathon training", "Build weekly mileage slowly and add one long run each weekend."),
    "d12": ("Sleep hygiene", "Keep a regular bedtime, a dark room and no screens in the last hour."),
}
QUERIES = {
    "q1": "I forgot my login, how do I get back into my account?",
    "q2": "what does E4021 mean",
    "q3": "how do I keep my sourdough starter alive and bake bread",
    "q4": "looking after a bike chain",
    "q9": "a training query without judgements",
}
QRELS = [("q1", "d1", 1), ("q2", "d2", 1), ("q3", "d8", 2), ("q3", "d9", 1), ("q4", "d10", 1)]


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as fh:
        for doc_id, (title, text) in DOCS.items():
            fh.write(json.dumps({"_id": doc_id, "title": title, "text": text, "metadata": {}}) + "\n")
    with (folder / "queries.jsonl").open("w") as fh:
        for qid, text in QUERIES.items():
            fh.write(json.dumps({"_id": qid, "text": text, "metadata": {}}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in QRELS]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return folder


def _score_run_module():
    spec = importlib.util.spec_from_file_location("score_run", ROOT / "bench" / "score_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------------- metrics


def test_metrics_on_a_hand_computed_case():
    ranked = ["x", "d1", "y", "z", "d2"]
    judged = {"d1": 1, "d2": 2, "d9": 1, "bad": 0}
    # DCG = 1/log2(3) + 2/log2(6); ideal from the qrels: 2/log2(2) + 1/log2(3) + 1/log2(4)
    dcg = 1 / math.log2(3) + 2 / math.log2(6)
    idcg = 2 + 1 / math.log2(3) + 0.5
    assert ndcg(ranked, judged, 10) == pytest.approx(dcg / idcg, abs=1e-12)
    assert ndcg(ranked, judged, 10) == pytest.approx(0.4486, abs=1e-4)
    assert recall(ranked, judged, 10) == pytest.approx(2 / 3)
    assert recall(ranked, judged, 2) == pytest.approx(1 / 3)
    assert mrr(ranked, judged, 10) == pytest.approx(0.5)
    assert mrr(["x"] * 10 + ["d1"], judged, 10) == 0.0
    assert ndcg(["d2", "d1", "d9"], judged, 10) == pytest.approx(1.0)
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert percentile([5.0], 95) == 5.0


def test_independent_scorer_agrees_on_a_written_run(tmp_path):
    folder = write_beir(tmp_path / "beir")
    runs = {"q1": [("d1", 3.0), ("d4", 2.0)], "q2": [("d3", 0.9), ("d2", 0.9), ("d5", 0.1)],
            "q3": [("d9", 1.0), ("d7", 0.5), ("d8", 0.4)]}  # q4 is missing: it scores 0
    run_file = tmp_path / "run.txt"
    write_run(run_file, runs, "test")
    lines = [line.split() for line in run_file.read_text().splitlines()]
    assert all(len(f) == 6 and f[1] == "Q0" and f[5] == "test" for f in lines)
    for qid in runs:  # ranks 1..n, scores strictly falling even where the inputs tied
        rows = [f for f in lines if f[0] == qid]
        assert [int(f[3]) for f in rows] == list(range(1, len(rows) + 1))
        scores = [float(f[4]) for f in rows]
        assert all(a > b for a, b in zip(scores, scores[1:]))
    data = load_beir(folder)
    assert set(data.queries) == {"q1", "q2", "q3", "q4"}  # the unjudged query is not a test query
    ours = {q: ndcg([d for d, _ in runs.get(q, [])], data.qrels[q]) for q in data.qrels}
    theirs = _score_run_module().score(str(run_file), str(folder / "qrels" / "test.tsv"))
    assert theirs["queries"] == 4
    assert theirs["ndcg@10"] == pytest.approx(sum(ours.values()) / 4, abs=1e-9)


# ----------------------------------------------------------------------------- end to end


def _eval_json(capsys, *args) -> dict:
    code = main(["eval", *map(str, args), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_eval_end_to_end_run_file_cache_and_user_index_untouched(tmp_path, rag_home, capsys):
    from ragcli.config import load_config
    from ragcli.pipeline import index

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.md").write_text("# My note\n\nSomething only I wrote about E4021 and sourdough.\n")
    config = load_config()
    index(config, [notes])
    user_index = _tree_digest(config.index_dir)

    folder = write_beir(tmp_path / "beir")
    run_file = tmp_path / "hybrid.run"
    first = _eval_json(capsys, folder, "--run-file", run_file)
    for key in ("ndcg@10", "recall@10", "recall@100", "mrr@10", "queries", "mode", "index_seconds",
                "query_ms_p50", "query_ms_p95"):
        assert key in first
    assert first["mode"] == "hybrid" and first["queries"] == 4
    assert first["embedded"] > 0 and first["docs"] == len(DOCS)
    assert first["ndcg@10"] >= 0.8  # each query has an obvious answer in this corpus
    assert first["recall@100"] == 1.0  # 12 documents: every one is in the top 100

    lines = [line.split() for line in run_file.read_text().splitlines()]
    assert {f[0] for f in lines} == {"q1", "q2", "q3", "q4"}
    assert all(len([f for f in lines if f[0] == q]) == len(DOCS) for q in ("q1", "q2", "q3", "q4"))
    theirs = _score_run_module().score(str(run_file), str(folder / "qrels" / "test.tsv"))
    for key in ("ndcg@10", "recall@10", "recall@100", "mrr@10"):
        assert theirs[key] == pytest.approx(first[key], abs=1e-4)

    # The eval index lives in the cache, keyed by corpus and settings; the user's is untouched.
    assert Path(first["index_dir"]).is_relative_to(rag_home / "cache" / "eval")
    assert _tree_digest(config.index_dir) == user_index

    second = _eval_json(capsys, folder, "--mode", "keyword")
    assert second["embedded"] == 0  # every vector came from the cache
    assert second["mode"] == "keyword" and second["index_dir"] == first["index_dir"]
    vector = _eval_json(capsys, folder, "--mode", "vector")
    assert vector["embedded"] == 0
    assert _tree_digest(config.index_dir) == user_index


def test_eval_refuses_a_folder_that_is_not_beir(tmp_path, capsys):
    code = main(["eval", str(tmp_path)])
    assert code == 2
    assert "corpus.jsonl" in capsys.readouterr().err
