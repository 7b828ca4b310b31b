"""`rag mcp`: the real server (`python -m ragcli.cli mcp`) in a child process, driven over
stdio by the official SDK's own client, against a real index of a copy of examples/vault.

One server process serves the whole module (its index and embedder stay warm, as they
would for an agent); the tests are the calls an agent would make, hostile ones included.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from anyio.from_thread import start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from conftest import EXAMPLES, ROOT

SECRET = "TOP SECRET: the launch code is 0000"
TIMEOUT = 300  # seconds for one call: generous, the machine is shared


class Client:
    """Synchronous calls into one MCP client session running in a portal's event loop."""

    def __init__(self, portal, session: ClientSession):
        self.portal, self.session = portal, session

    def call(self, name: str, arguments: dict | None = None):
        return self.portal.call(lambda: self.session.call_tool(name, arguments or {},
                                                                read_timeout_seconds=TIMEOUT))

    def ok(self, name: str, arguments: dict | None = None) -> dict:
        result = self.call(name, arguments)
        assert not result.is_error, result.content
        # the structured result and the text content say the same thing
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content

    def refused(self, name: str, arguments: dict | None = None) -> str:
        result = self.call(name, arguments)
        assert result.is_error, result
        text = " ".join(c.text for c in result.content)
        assert SECRET not in text
        return text


def _server_params(home: Path, models: Path) -> StdioServerParameters:
    env = {"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models), "PYTHONPATH": str(ROOT),
           "OMP_WAIT_POLICY": "PASSIVE", "ANONYMIZED_TELEMETRY": "False"}
    return StdioServerParameters(command=sys.executable, args=["-m", "ragcli.cli", "mcp", "--max-tokens", "48"],
                                 env=env)


def _serve(params: StdioServerParameters, errlog):
    """A started, initialised client session (a generator: the server stops when it ends)."""
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)) as (read, write):
            with portal.wrap_async_context_manager(ClientSession(read, write)) as session:
                portal.call(lambda: session.initialize())
                yield Client(portal, session)


@pytest.fixture(scope="module")
def world(tmp_path_factory, models_dir):
    """A vault with hostile neighbours, its index, and the paths the tests aim at."""
    from ragcli.config import load_config
    from ragcli.pipeline import index

    base = tmp_path_factory.mktemp("mcp")
    vault = base / "vault"
    shutil.copytree(EXAMPLES / "vault", vault)
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (vault / "Escape.md").symlink_to(outside / "secret.md")  # never indexed: links are not followed
    (vault / ".obsidian" / "private.md").write_text(f"# Private\n\n{SECRET}\n")  # hidden: not indexed
    (vault / "Victim.md").write_text("# Victim\n\nA plain note about copper kettles.\n")
    home = base / "home"
    home.mkdir()
    report = index(load_config(env={"RAG_HOME": str(home), "RAG_MODELS_DIR": str(models_dir)}), [vault])
    assert report.files_indexed >= 10
    # after indexing, an indexed note becomes a link out of the vault
    (vault / "Victim.md").unlink()
    (vault / "Victim.md").symlink_to(outside / "secret.md")
    return {"vault": vault, "outside": outside, "home": home, "models": models_dir, "log": base / "server.log"}


@pytest.fixture(scope="module")
def rag(world):
    with open(world["log"], "w") as errlog:
        yield from _serve(_server_params(world["home"], world["models"]), errlog)
    log = world["log"].read_text()
    assert "Traceback" not in log, log[-4000:]


def test_lists_the_four_read_only_tools(rag):
    listed = rag.portal.call(lambda: rag.session.list_tools()).tools
    assert {t.name for t in listed} == {"search", "ask", "get", "status"}
    for tool in listed:
        assert tool.annotations.read_only_hint is True
        assert tool.description
    schemas = {t.name: t.input_schema for t in listed}
    assert schemas["search"]["required"] == ["query"]
    assert schemas["get"]["required"] == ["path"]
    assert set(schemas["search"]["properties"]) >= {"query", "k", "mode", "path", "tag", "since", "until"}


def test_search_results_carry_where_they_came_from(rag, world):
    found = rag.ok("search", {"query": "drip irrigation pressure", "k": 3})
    assert found["mode"] == "hybrid" and 1 <= len(found["results"]) <= 3
    top = found["results"][0]
    assert top["path"] == str(world["vault"] / "Projects" / "Garden irrigation.md")
    for hit in found["results"]:
        assert {"path", "title", "heading", "line_start", "line_end", "page", "score", "text"} <= set(hit)
        assert Path(hit["path"]).is_relative_to(world["vault"])
        assert 1 <= hit["line_start"] <= hit["line_end"]
    # the cited lines hold the passage: what `get` returns for them contains its words
    lines = rag.ok("get", {"path": top["path"], "line_start": top["line_start"], "line_end": top["line_end"]})
    assert " ".join(top["text"].split()[:6]) in " ".join(lines["text"].split())


def test_search_filters_and_modes(rag, world):
    coffee = rag.ok("search", {"query": "grind", "k": 10, "path": "*/Coffee/*"})["results"]
    assert coffee and all("/Coffee/" in h["path"] for h in coffee)
    keyword = rag.ok("search", {"query": "sourdough", "mode": "keyword", "k": 2})
    assert keyword["mode"] == "keyword" and keyword["results"][0]["path"].endswith("Sourdough.md")
    tagged = rag.ok("search", {"query": "coffee", "tag": "recipe", "k": 10})["results"]
    # tagged `recipe`: Pour over and Sourdough; Espresso (tagged only `coffee`) is filtered out
    assert {Path(h["path"]).name for h in tagged} == {"Pour over.md", "Sourdough.md"}
    assert rag.ok("search", {"query": "coffee", "since": "2030-01-01"})["results"] == []


def test_get_reads_a_note_whole_or_by_lines(rag, world):
    note = world["vault"] / "Coffee" / "Pour over.md"
    lines = note.read_text().splitlines()
    whole = rag.ok("get", {"path": str(note)})
    assert whole["text"].splitlines() == lines and whole["total_lines"] == len(lines)
    assert whole["line_start"] == 1 and whole["line_end"] == len(lines)
    assert whole["changed_since_indexed"] is False and whole["truncated"] is False
    part = rag.ok("get", {"path": "Coffee/Pour over.md", "line_start": 16, "line_end": 22})  # relative to the root
    assert part["path"] == str(note)
    assert part["text"].splitlines() == lines[15:22] and (part["line_start"], part["line_end"]) == (16, 22)
    tail = rag.ok("get", {"path": str(note), "line_start": len(lines) - 1, "line_end": 10_000})
    assert tail["line_end"] == len(lines) and tail["text"].splitlines() == lines[-2:]
    assert "past the end" in rag.refused("get", {"path": str(note), "line_start": 10_000})
    assert "bad line range" in rag.refused("get", {"path": str(note), "line_start": 9, "line_end": 3})
    assert "not a PDF" in rag.refused("get", {"path": str(note), "page": 2})


def test_get_reads_a_pdf_page_as_the_index_numbered_it(rag):
    hits = rag.ok("search", {"query": "moka pot", "path": "*.pdf", "k": 3})["results"]
    assert hits and all(h["page"] for h in hits)
    hit = hits[0]
    page = rag.ok("get", {"path": hit["path"], "page": hit["page"], "line_start": hit["line_start"],
                          "line_end": hit["line_end"]})
    assert page["page"] == hit["page"] and hit["page"] in page["pages"]
    assert " ".join(hit["text"].split()[:6]) in " ".join(page["text"].split())
    assert "has no text" in rag.refused("get", {"path": hit["path"], "page": 999})


def test_get_refuses_everything_outside_the_indexed_notes(rag, world):
    vault, outside = world["vault"], world["outside"]
    assert "'..' is not allowed" in rag.refused("get", {"path": "../../etc/passwd"})
    assert "'..' is not allowed" in rag.refused("get", {"path": f"{vault}/../outside/secret.md"})
    assert "outside the indexed folders" in rag.refused("get", {"path": "/etc/passwd"})
    assert "outside the indexed folders" in rag.refused("get", {"path": str(outside / "secret.md")})
    # a sibling folder whose name starts like the root's is not under the root
    assert "outside the indexed folders" in rag.refused("get", {"path": f"{vault}-evil/note.md"})
    # a symlink in the vault pointing out: never indexed, so never readable
    assert "not an indexed note" in rag.refused("get", {"path": str(vault / "Escape.md")})
    assert "not an indexed note" in rag.refused("get", {"path": "Escape.md"})
    # a hidden file under the root (skipped by the indexer) is not readable either
    assert "not an indexed note" in rag.refused("get", {"path": str(vault / ".obsidian" / "private.md")})
    assert "not an indexed note" in rag.refused("get", {"path": str(vault / ".obsidian" / "app.json")})
    # an indexed note that became a symlink to a file outside the vault
    text = rag.refused("get", {"path": str(vault / "Victim.md")})
    assert "resolves outside the indexed folders" in text
    assert "Hint:" in text
    assert "no path given" in rag.refused("get", {"path": ""})


def test_malformed_calls_are_errors_and_the_server_carries_on(rag, world):
    assert "path" in rag.refused("get", {})  # missing argument: the SDK's schema check
    assert rag.refused("search", {"query": "x", "k": "many"})
    assert rag.refused("search", {"query": "x", "mode": "psychic"})
    assert rag.refused("no_such_tool", {"x": 1})
    text = rag.refused("search", {"query": "coffee", "k": 500})  # our UsageError: message and hint
    assert "k must be between 1 and 50" in text
    assert "the query is empty" in rag.refused("search", {"query": "   "})
    assert rag.ok("status")["exists"] is True  # still answering


def test_status_describes_the_index(rag, world):
    rag.ok("search", {"query": "drip irrigation"})  # loads the searcher, whichever test ran first
    info = rag.ok("status")
    assert info["roots"] == [str(world["vault"])]
    assert info["files"] >= 10 and info["chunks"] > info["files"]
    assert info["embedding_model"].startswith("all-MiniLM-L6-v2")
    assert info["server"]["searcher_loaded"] is True


def test_ask_answers_with_sources_from_the_vault(rag, world):
    result = rag.ok("ask", {"question": "What pressure should the drip irrigation run at?"})
    assert result["question"].startswith("What pressure")
    assert result["covered"] and result["sources"], result
    # the quotes are the answer; a checked sentence is added only when it says more
    assert any("1.7 bar" in q["text"] for q in result["quotes"]) or "1.7 bar" in result["answer"]
    for source in result["sources"]:
        assert Path(source["path"]).is_relative_to(world["vault"])
        assert 1 <= source["line_start"] <= source["line_end"]
        assert "heading" in source
    assert any(s["path"].endswith("Garden irrigation.md") for s in result["sources"])
    assert set(result["cited"]) <= {s["n"] for s in result["sources"]}
    assert rag.ok("status")["server"]["generator_loaded"] is True


def _readme_server() -> dict:
    """The `mcpServers` entry the README tells users to paste into their MCP client."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```json", readme.index("## Use it from an agent (MCP)")) + len("```json")
    return json.loads(readme[start:readme.index("```", start)])["mcpServers"]["notes"]


def test_the_readme_snippet_starts_a_server_that_explains_a_missing_index(tmp_path, models_dir):
    """The README's client configuration, run as a client would (command, args, env), with
    RAG_HOME pointing at a home with no index yet: tools explain, status still works."""
    server = _readme_server()
    assert server["command"] == "rag" and server["args"] == ["mcp"] and "RAG_HOME" in server["env"]
    script = shutil.which(server["command"], path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the `rag` script is not installed next to this Python (pip install -e .)")
    home = tmp_path / "empty-home"
    home.mkdir()
    params = _server_params(home, models_dir)
    params = StdioServerParameters(command=script, args=server["args"],
                                   env={**params.env, **server["env"], "RAG_HOME": str(home)})
    log = tmp_path / "server.log"
    with open(log, "w") as errlog:
        for client in _serve(params, errlog):
            text = client.refused("search", {"query": "anything"})
            assert "no index" in text and "Hint: Build one first: rag index PATH" in text
            assert "no index" in client.refused("get", {"path": "note.md"})
            assert client.ok("status")["exists"] is False
    assert "Traceback" not in log.read_text()
