"""Hygiene: what reaches the terminal is clean, no note text is logged, the index is private,
nothing touches the network, and a bad model file is one line and an exit code.

All through the real CLI in child processes, checked on raw bytes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, ok, rag, rag_popen, wait_for, watching, write_vault

SECRET = "confidentialaardvark"  # note text that must never show up in a log
# ESC-based sequences: colour, cursor movement, an OSC 52 clipboard write, an OSC 8 link,
# a window-title OSC, DCS, 8-bit CSI/OSC, plus BEL, backspace and carriage return.
EVIL = ("\x1b[31mred\x1b[0m \x1b[2J\x1b[H \x1b]52;c;cm0gLXJmIH4K\x07 "
        "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x1b]0;pwned title\x07 "
        "\x1bP+q544e\x1b\\ \x9b31m \x9d0;c1title\x9c \x07\x08\x08 \rover")
CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")


def _evil_vault(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "evil.md").write_text(
        f"---\ntitle: Evil {EVIL} title\n---\n# Evil note {EVIL}\n\n## Heading {EVIL}\n\n"
        f"The escapeword is here: {EVIL} and the {SECRET} too.\n\n"
        + "Ordinary prose around the pasted terminal output, as a real note has it. " * 60 + "\n",
        encoding="utf-8")  # (a note that is mostly control bytes is refused as binary, rightly)
    (folder / "name \x1b]52;c;Zm9v\x07 odd.md").write_text("# Odd name\n\nescapeword in a file with an odd name.\n")
    (folder / "plain.md").write_text(f"# Plain\n\nNothing special, only the {SECRET} once.\n")
    return folder


@pytest.fixture(scope="module")
def evil_home(tmp_path_factory, models_dir):
    base = tmp_path_factory.mktemp("hygiene")
    notes = _evil_vault(base / "notes")
    home = base / "home"
    env = {"RAG_MODELS_DIR": str(models_dir)}
    proc = ok(rag("index", notes, home=home, env=env))
    return notes, home, env, proc


def test_escape_sequences_from_notes_print_clean(evil_home):
    notes, home, env, index_proc = evil_home
    for proc in (index_proc,
                 ok(rag("search", "escapeword", home=home, env=env)),
                 ok(rag("search", "escapeword", "--mode", "keyword", home=home, env=env)),
                 ok(rag("status", home=home, env=env))):
        for stream in (proc.stdout, proc.stderr):
            assert not CONTROL_BYTES.search(stream), CONTROL_BYTES.search(stream)
    out = ok(rag("search", "escapeword", home=home, env=env)).stdout.decode()
    assert "evil.md" in out and "red" in out and "click" in out  # text kept, controls gone


def test_json_output_has_no_raw_control_bytes(evil_home):
    notes, home, env, _ = evil_home
    proc = ok(rag("search", "escapeword", "--json", home=home, env=env))
    assert not CONTROL_BYTES.search(proc.stdout), CONTROL_BYTES.search(proc.stdout)
    data = json.loads(proc.stdout)  # the JSON still carries the exact text, escaped
    assert any("\x1b]52" in r["text"] for r in data["results"])


def test_no_note_text_is_logged_at_the_default_level(evil_home, tmp_path):
    notes, home, env, index_proc = evil_home
    runs = [index_proc, ok(rag("search", SECRET, home=home, env=env)), ok(rag("verify", home=home, env=env)),
            ok(rag("index", notes, home=home, env=env))]
    for proc in runs:
        assert SECRET.encode() not in proc.stderr
    # and nothing outside the index folder holds note text (no log files, no caches)
    for path in home.rglob("*"):
        if path.is_file() and (home / "index") not in path.parents:
            assert SECRET.encode() not in path.read_bytes(), path


def test_watch_logs_no_note_text(tmp_path, models_dir):
    notes = _evil_vault(tmp_path / "notes")
    home = tmp_path / "home"
    env = {"RAG_MODELS_DIR": str(models_dir)}
    ok(rag("index", notes, home=home, env=env))
    log = tmp_path / "watch.log"
    proc = rag_popen("watch", notes, "--debounce", "0.2", "--log-file", log, home=home, env=env,
                     stdout=subprocess.PIPE)

    def found() -> bool:
        proc = ok(rag("search", "fresh", "--json", "--mode", "keyword", home=home, env=env))
        return bool(json.loads(proc.stdout)["results"])

    try:
        wait_for(lambda: watching(home), "the watcher's start-up sync", 120, alive=proc)
        # enough plain text that the control characters stay under the binary-file threshold
        plain = "The watcher indexes this note as it indexes any other. " * 15
        (notes / "new.md").write_text(f"# New\n\nA fresh {SECRET} {EVIL}.\n\n{plain}\n")
        wait_for(found, "the new note to be indexed", 120, alive=proc)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
    assert SECRET.encode() not in err and SECRET.encode() not in log.read_bytes()
    assert not CONTROL_BYTES.search(err), err[-500:]


def _modes(path: Path) -> list[tuple[str, str]]:
    bad = []
    for p in [path, *path.rglob("*")]:
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            continue
        mode = stat.S_IMODE(st.st_mode)
        if (stat.S_ISDIR(st.st_mode) and mode != 0o700) or (not stat.S_ISDIR(st.st_mode) and mode & 0o077):
            bad.append((str(p.relative_to(path)), oct(mode)))
    return bad


def test_index_folder_is_private_after_every_command(tmp_path, models_dir):
    notes = write_vault(tmp_path / "notes", notes=4)
    home = tmp_path / "home"
    env = {"RAG_MODELS_DIR": str(models_dir)}
    old = os.umask(0o022)  # a usual umask: the code must not rely on the caller's
    try:
        ok(rag("index", notes, home=home, env=env))
        assert _modes(home / "index") == []
        assert stat.S_IMODE((home / "index").stat().st_mode) == 0o700
        ok(rag("search", "river", home=home, env=env))
        ok(rag("status", home=home, env=env))
        assert _modes(home / "index") == []
        shutil.rmtree(home / "index" / "chroma")
        ok(rag("verify", "--repair", home=home, env=env))  # a rebuilt store is private too
        assert _modes(home / "index") == []
        files = [p for p in (home / "index").rglob("*") if p.is_file()]
        assert any("chroma" in str(p) for p in files)  # Chroma's own files were checked
    finally:
        os.umask(old)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
def test_everything_works_without_a_network(tmp_path, models_dir):
    notes = write_vault(tmp_path / "notes", notes=4)
    home = tmp_path / "home"
    e = dict(os.environ, RAG_HOME=str(home), RAG_MODELS_DIR=str(models_dir), PYTHONPATH=str(ROOT))
    for args in (["index", str(notes)], ["search", "river lantern"], ["verify"], ["status"]):
        proc = subprocess.run(["unshare", "-n", sys.executable, "-m", "ragcli.cli", *args], capture_output=True,
                              env=e, timeout=600)
        assert proc.returncode == 0 and b"Traceback" not in proc.stderr, (args, proc.stderr[-2000:])


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_no_socket_is_opened_for_the_network(tmp_path, models_dir):
    """No connect/bind/listen on an internet socket: nothing phones home, nothing listens."""
    notes = write_vault(tmp_path / "notes", notes=4)
    home = tmp_path / "home"
    e = dict(os.environ, RAG_HOME=str(home), RAG_MODELS_DIR=str(models_dir), PYTHONPATH=str(ROOT))
    for args in (["index", str(notes)], ["search", "river lantern"], ["verify"]):
        log = tmp_path / f"strace-{args[0]}.log"
        proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=socket,connect,bind,listen", "-o", str(log),
                               sys.executable, "-m", "ragcli.cli", *args], capture_output=True, env=e, timeout=600)
        assert proc.returncode == 0, (args, proc.stderr[-2000:])
        calls = [line for line in log.read_text().splitlines() if "AF_INET" in line]
        assert calls == [], (args, calls[:5])


def _model_files(tmp_path: Path, models_dir: Path) -> dict[str, Path]:
    files = {}
    files["random bytes"] = tmp_path / "random.gguf"
    files["random bytes"].write_bytes(os.urandom(3 * 2**20))
    files["text file"] = tmp_path / "text.gguf"
    files["text file"].write_text("this is not a model\n" * 100)
    files["empty"] = tmp_path / "empty.gguf"
    files["empty"].write_bytes(b"")
    files["absurd header"] = tmp_path / "absurd.gguf"
    files["absurd header"].write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (2**40).to_bytes(8, "little")
                                      + (2**40).to_bytes(8, "little") + os.urandom(4096))
    files["directory"] = tmp_path / "dir.gguf"
    files["directory"].mkdir()
    real = sorted(models_dir.rglob("*.gguf"))
    if real:
        data = real[0].read_bytes()
        files["truncated real GGUF"] = tmp_path / "truncated.gguf"
        files["truncated real GGUF"].write_bytes(data[: len(data) // 2])
        files["real GGUF, header only"] = tmp_path / "header.gguf"
        files["real GGUF, header only"].write_bytes(data[:100_000])
    return files


def _assert_one_line_error(proc: subprocess.CompletedProcess, what: str) -> None:
    assert 0 < proc.returncode < 128, (what, proc.returncode, proc.stderr[-2000:])
    assert b"Traceback" not in proc.stderr, (what, proc.stderr[-2000:])
    lines = [line for line in proc.stderr.decode(errors="replace").splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, (what, proc.stderr[-2000:])


def test_bad_embedding_model_is_one_line_and_an_exit_code(tmp_path, models_dir):
    notes = write_vault(tmp_path / "notes", notes=2)
    ok(rag("index", notes, home=tmp_path / "warm", env={"RAG_MODELS_DIR": str(models_dir)}))  # real GGUF exists
    for what, path in _model_files(tmp_path, models_dir).items():
        proc = rag("index", notes, home=tmp_path / f"home-{what.replace(' ', '-')}",
                   env={"RAG_MODELS_DIR": str(models_dir), "RAG_EMBED_MODEL": str(path)})
        _assert_one_line_error(proc, what)
        assert proc.returncode == 5, (what, proc.returncode, proc.stderr[-1000:])


def test_bad_generation_model_is_one_line_and_an_exit_code(tmp_path, models_dir):
    notes = write_vault(tmp_path / "notes", notes=2)
    home = tmp_path / "home"
    env = {"RAG_MODELS_DIR": str(models_dir)}
    ok(rag("index", notes, home=home, env=env))
    for what, path in _model_files(tmp_path, models_dir).items():
        proc = rag("ask", "What is the river like?", home=home, env={**env, "RAG_LLM_MODEL": str(path)})
        _assert_one_line_error(proc, what)
