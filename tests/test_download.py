"""`rag models pull` against a real HTTP server on loopback: Range resume after a dropped
connection, checksum rejection (ours and the server's), names mapped to URLs, --set."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ragcli.cli import full_app, main
from ragcli.config import load_config
from ragcli.models.download import announced_sha256, download, resolve_name, set_model_in_config
from ragcli.errors import DownloadError, UsageError

app = full_app()  # the Typer app with every command registered


def _make_gguf(path: Path) -> bytes:
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(1)
    rng = np.random.default_rng(0)
    for i in range(4):
        writer.add_tensor(f"blk.0.w{i}", rng.standard_normal((64, 256)).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


class _Server:
    """Serves one file with Range support; can drop the connection part-way, once."""

    def __init__(self, data: bytes):
        self.data = data
        self.drop_after: int | None = None  # bytes sent before the first response is cut
        self.etag: str | None = None
        self.linked_etag: str | None = None
        self.honour_range = True
        self.requests: list[dict] = []
        self.bytes_sent = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                rng = self.headers.get("Range")
                outer.requests.append({"path": self.path, "range": rng})
                if not self.path.endswith(".gguf"):
                    self.send_error(404)
                    return
                start = 0
                if rng and outer.honour_range:
                    start = int(rng.split("=")[1].split("-")[0])
                    if start >= len(outer.data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(outer.data)}")
                        self.end_headers()
                        return
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{len(outer.data) - 1}/{len(outer.data)}")
                else:
                    self.send_response(200)
                body = outer.data[start:]
                self.send_header("Content-Length", str(len(body)))
                if outer.etag:
                    self.send_header("ETag", outer.etag)
                if outer.linked_etag:
                    self.send_header("X-Linked-Etag", outer.linked_etag)
                self.end_headers()
                if outer.drop_after is not None:
                    cut, outer.drop_after = outer.drop_after, None
                    # Counted before the write: the client may finish reading before this
                    # thread runs again, and the test reads the count right after.
                    outer.bytes_sent += cut
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                outer.bytes_sent += len(body)
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str = "model.gguf") -> str:
        return f"http://127.0.0.1:{self.port}/files/{name}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def gguf_bytes(tmp_path_factory) -> bytes:
    return _make_gguf(tmp_path_factory.mktemp("src") / "tiny.gguf")


@pytest.fixture
def server(gguf_bytes):
    s = _Server(gguf_bytes)
    yield s
    s.close()


def test_download_resumes_after_a_dropped_connection(server, gguf_bytes, tmp_path):
    server.drop_after = len(gguf_bytes) // 3
    seen: list[tuple[int, int | None]] = []
    dest = download(server.url(), tmp_path / "m.gguf", on_progress=lambda e: seen.append((e.done, e.total)))
    assert dest.read_bytes() == gguf_bytes
    assert not (tmp_path / "m.gguf.part").exists()
    assert server.requests[0]["range"] is None
    assert server.requests[1]["range"] == f"bytes={len(gguf_bytes) // 3}-"  # resumed, not restarted
    assert server.bytes_sent == len(gguf_bytes)  # no byte sent twice
    assert seen[-1] == (len(gguf_bytes), len(gguf_bytes))


def test_a_part_file_left_by_an_earlier_run_is_resumed(server, gguf_bytes, tmp_path):
    (tmp_path / "m.gguf.part").write_bytes(gguf_bytes[:1000])
    download(server.url(), tmp_path / "m.gguf", sha256=hashlib.sha256(gguf_bytes).hexdigest())
    assert (tmp_path / "m.gguf").read_bytes() == gguf_bytes
    assert server.requests[0]["range"] == "bytes=1000-"
    assert server.bytes_sent == len(gguf_bytes) - 1000


def test_a_server_that_ignores_range_restarts_cleanly(server, gguf_bytes, tmp_path):
    server.honour_range = False
    (tmp_path / "m.gguf.part").write_bytes(b"stale bytes from elsewhere")
    download(server.url(), tmp_path / "m.gguf")
    assert (tmp_path / "m.gguf").read_bytes() == gguf_bytes


def test_wrong_checksum_is_rejected_and_nothing_is_kept(server, tmp_path):
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(server.url(), tmp_path / "m.gguf", sha256="0" * 64)
    assert not (tmp_path / "m.gguf").exists()
    assert not (tmp_path / "m.gguf.part").exists()


def test_the_servers_sha256_etag_is_checked(server, gguf_bytes, tmp_path):
    server.linked_etag = '"' + "f" * 64 + '"'  # what HF sends for LFS files, here wrong
    with pytest.raises(DownloadError, match="server's checksum"):
        download(server.url(), tmp_path / "m.gguf")
    server.linked_etag = '"' + hashlib.sha256(gguf_bytes).hexdigest() + '"'
    download(server.url(), tmp_path / "m.gguf")
    assert (tmp_path / "m.gguf").read_bytes() == gguf_bytes


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    s = _Server(b"<html>not a model</html>" * 100)
    try:
        with pytest.raises(DownloadError, match="not a usable GGUF"):
            download(s.url(), tmp_path / "m.gguf")
        assert not (tmp_path / "m.gguf").exists()
    finally:
        s.close()


def test_missing_file_is_a_download_error(server, tmp_path):
    with pytest.raises(DownloadError, match="404"):
        download(server.url("nope.bin"), tmp_path / "nope.bin")


def test_names_map_to_hugging_face_urls():
    env = {}
    r = resolve_name("hf://owner/repo/sub/file.Q4_K_M.gguf", env)
    assert r.url == "https://huggingface.co/owner/repo/resolve/main/sub/file.Q4_K_M.gguf"
    assert r.filename == "file.Q4_K_M.gguf"
    assert resolve_name("owner/repo:file.gguf", env).url == \
        "https://huggingface.co/owner/repo/resolve/main/file.gguf"
    assert resolve_name("owner/repo@v2:file.gguf", env).url == \
        "https://huggingface.co/owner/repo/resolve/v2/file.gguf"
    assert resolve_name("hf://o/r/f.gguf", {"HF_ENDPOINT": "http://127.0.0.1:1"}).url.startswith("http://127.0.0.1:1/o/r/")
    for bad in ("justaname", "hf://owner/file.gguf", "hf://o/r/.."):
        with pytest.raises(UsageError):
            resolve_name(bad, env)


def test_announced_sha256_ignores_weak_and_non_digest_etags():
    h = "a" * 64
    assert announced_sha256({"X-Linked-Etag": f'"{h}"'}) == h
    assert announced_sha256({"ETag": f'W/"{h}"'}) is None
    assert announced_sha256({"ETag": '"abc123"'}) is None


def test_set_model_in_config_keeps_other_settings(rag_home):
    cfg = rag_home / "config.toml"
    cfg.write_text('# mine\ntop_k = 3\nllm_model = "/old.gguf"\n')
    set_model_in_config(cfg, "llm", Path("/new/m.gguf"))
    set_model_in_config(cfg, "embed", Path('/we"ird/e.gguf'))
    config = load_config()
    assert config.llm_model == "/new/m.gguf" and config.embed_model == '/we"ird/e.gguf'
    assert config.top_k == 3 and "# mine" in cfg.read_text()


def test_cli_pull_with_hf_name_and_set(server, gguf_bytes, rag_home, monkeypatch):
    monkeypatch.setenv("RAG_MODELS_DIR", str(rag_home / "models"))  # not the shared test cache
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.port}")
    digest = hashlib.sha256(gguf_bytes).hexdigest()
    result = CliRunner().invoke(app, ["models", "pull", "hf://me/tiny/model.gguf", "--sha256", digest,
                                      "--set", "llm"])
    assert result.exit_code == 0, result.output
    assert server.requests[0]["path"] == "/me/tiny/resolve/main/model.gguf"
    config = load_config()
    assert Path(config.llm_model).read_bytes() == gguf_bytes
    assert Path(config.llm_model).parent == config.models_dir
    assert str(config.llm_model) in result.stdout


def test_cli_pull_bad_checksum_exits_with_download_code(server, capsys, rag_home, monkeypatch):
    monkeypatch.setenv("RAG_MODELS_DIR", str(rag_home / "models"))
    code = main(["models", "pull", server.url(), "--sha256", "1" * 64])
    err = capsys.readouterr().err
    assert code == 9
    assert "checksum mismatch" in err and "Traceback" not in err


def test_nothing_is_downloaded_unless_asked(rag_home):
    # listing models never touches the network nor creates model files
    result = CliRunner().invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    assert not (rag_home / "models").exists() or not any((rag_home / "models").glob("*.part"))


def test_a_catalog_name_fetches_the_official_file_and_checks_its_pinned_sha256(server, capsys, rag_home,
                                                                                monkeypatch):
    """`rag models pull qwen2.5-1.5b-instruct`: the official repo's file, through HF_ENDPOINT,
    checked against the catalog's pin: the loopback server's bytes are not Qwen's, so the
    download is refused and nothing is kept."""
    from ragcli.models.catalog import lookup

    model = lookup("qwen2.5-1.5b-instruct")
    assert model is not None and model.sha256 and model.role == "llm"
    monkeypatch.setenv("RAG_MODELS_DIR", str(rag_home / "models"))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.port}")
    code = main(["models", "pull", "qwen2.5-1.5b-instruct"])
    err = capsys.readouterr().err
    assert code == 9 and "checksum mismatch" in err
    assert server.requests[0]["path"] == f"/{model.repo}/resolve/main/{model.file}"
    assert not list((rag_home / "models").glob("*.gguf"))
