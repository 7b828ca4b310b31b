"""The GPU path, checked on a CPU build: llama.cpp's library loads before any other native
library, flash attention is chosen per backend, `rag doctor` names the backend and where each
model runs, and the generator's saved system-prompt state is keyed by where it ran.

The import-order test watches a real `rag index` / `rag search` / `rag ask` child: an audit
hook notes, at the moment libllama is dlopened, which shared objects the process has mapped
(/proc/self/maps). A CUDA build of llama.cpp crashes when numpy's came first (README, "GPU").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLES
from helpers import ok, rag

from ragcli.config import load_config
from ragcli.embed.llama import FLASH_AUTO, FLASH_ON, LlamaEmbedder, flash_attention
from ragcli.generate.llama import LlamaGenerator, prefix_key
from ragcli.maintenance.doctor import diagnose
from ragcli.maintenance.placement import backend_checks
from ragcli.models.backend import Backends, Device, describe_backends
from ragcli.models.llama import captured_log
from ragcli.models.packages import builtin_llm_path

linux_only = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")

# An audit hook that notes, when libllama is dlopened, the shared objects mapped before it.
HOOK = r"""
import json, sys
report = {"mapped_before_llama": None}
def hook(event, args):
    if event == "ctypes.dlopen" and "llama" in str(args[0]) and report["mapped_before_llama"] is None:
        with open("/proc/self/maps") as maps:
            objects = {line.split()[-1] for line in maps if ".so" in line.rsplit("/", 1)[-1]}
        report["library"] = str(args[0])
        report["mapped_before_llama"] = sorted(
            o for o in objects if ("site-packages" in o or "dist-packages" in o) and "/llama_cpp/" not in o)
sys.addaudithook(hook)
"""
# Runs `rag ARGS` in this interpreter; writes the report.
WATCH = HOOK + r"""
import os
from ragcli.cli import main
code = main(sys.argv[2:])
report["cuda_graphs_env"] = os.environ.get("GGML_CUDA_DISABLE_GRAPHS")
with open(sys.argv[1], "w") as out:
    json.dump(report, out)
sys.exit(code)
"""


def _native_order(tmp_path: Path, *args: str, env: dict | None = None, script: str = WATCH) -> dict:
    import os
    import subprocess

    from helpers import ROOT

    report = tmp_path / f"order-{Path(args[0]).name}.json"
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    proc = subprocess.run([sys.executable, "-c", script, str(report), *args], capture_output=True, env=e,
                          timeout=600)
    ok(proc)
    return json.loads(report.read_text())


@linux_only
def test_index_search_and_ask_load_llama_cpp_before_any_other_native_library(tmp_path, rag_home):
    for args in (["index", str(EXAMPLES / "vault")], ["search", "tags"], ["ask", "How do I tag a note?"]):
        report = _native_order(tmp_path, *args, env={"RAG_DAEMON": "off"})
        assert report["mapped_before_llama"] is not None, f"rag {args[0]} never loaded libllama"
        assert report["mapped_before_llama"] == [], (
            f"rag {args[0]}: native libraries loaded before {report['library']}")
        # CUDA graphs died mid-index on the lent H200 (README, "GPU"): off in every process
        # that loads a model, set before the load.
        assert report["cuda_graphs_env"] == "1", f"rag {args[0]} left llama.cpp's CUDA graphs on"


# The Python API, as the README shows it: bench_gpu's `python -c "from ragcli.embed import ..."`
# died with SIGSEGV on the lent H200 until the library door called llama_first too.
LIBRARY = HOOK + r"""
from ragcli import Notes
with Notes() as notes:
    notes.index([sys.argv[2]])
    report["hits"] = len(notes.search("tags"))
with open(sys.argv[1], "w") as out:
    json.dump(report, out)
"""


@linux_only
def test_the_python_api_loads_llama_cpp_before_any_other_native_library(tmp_path, rag_home):
    result = _native_order(tmp_path, str(EXAMPLES / "vault"), env={"RAG_DAEMON": "off"}, script=LIBRARY)
    assert result["hits"] > 0
    assert result["mapped_before_llama"] == [], "native libraries loaded before libllama"


# pytest imports the plugins installed beside it before any conftest; the lent H200's image
# had some that import numpy, and its run of this suite died in its 4th test.
PLUGIN_SITE = HOOK + r"""
import atexit, os
def _write():
    report["numpy_loaded"] = "numpy" in sys.modules
    with open(os.environ["RAG_ORDER_REPORT"], "w") as out:
        json.dump(report, out)
atexit.register(_write)
"""


@linux_only
def test_pytest_loads_llama_cpp_before_an_installed_plugin_imports_numpy(tmp_path):
    import os
    import subprocess

    from helpers import ROOT

    site = tmp_path / "site"
    info = site / "numpy_plugin-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: numpy-plugin\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nnumpy_plugin = numpy_plugin\n")
    (site / "numpy_plugin.py").write_text("import numpy\n")
    (site / "sitecustomize.py").write_text(PLUGIN_SITE)
    tests = tmp_path / "suite"
    tests.mkdir()
    (tests / "test_one.py").write_text("def test_one():\n    pass\n")
    report = tmp_path / "order.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    env.update(PYTHONPATH=f"{site}{os.pathsep}{ROOT}", RAG_ORDER_REPORT=str(report))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(tests)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(report.read_text())
    assert result["numpy_loaded"], "the plugin that imports numpy was not loaded"
    assert result["mapped_before_llama"] is not None, "numpy was loaded and libllama never was"
    assert result["mapped_before_llama"] == [], f"loaded before libllama: {result['mapped_before_llama']}"


def test_flash_attention_is_on_for_the_cpu_and_llama_cpp_s_choice_on_a_gpu():
    assert flash_attention(on_gpu=False) == FLASH_ON
    assert flash_attention(on_gpu=True) == FLASH_AUTO


def test_the_embedder_runs_where_this_build_puts_it_with_flash_attention_chosen_for_it(example_vault_env):
    from ragcli.embed.builtin import resolve_embed_model

    path = resolve_embed_model(load_config(env=example_vault_env)).path
    texts = ["Tags help you find notes.", "A vault is a folder of Markdown files."]
    chosen = LlamaEmbedder(path, model_id="t", n_threads=1, n_gpu_layers=-1)
    try:
        placed = (chosen.n_gpu_layers, chosen.flash_attn)
        a = chosen.embed(texts)
    finally:
        chosen.close()
    # llama.cpp's AUTO, what a GPU gets, resolves to on here; its log says so, and the
    # vectors are the same either way (which is why the choice is not fingerprinted).
    with captured_log() as lines:
        auto = LlamaEmbedder(path, model_id="t", n_threads=1, n_gpu_layers=0, flash_attn=FLASH_AUTO,
                             engine="llama.cpp")
    try:
        b = auto.embed(texts)
    finally:
        auto.close()
    assert "Flash Attention enabled" in "".join(lines)
    assert float(np.min(np.sum(a * b, axis=1))) > 0.9999
    # asked after the loads: describe_backends() before them leaves captured_log empty
    if describe_backends().gpu_offload:  # a GPU build that sees a GPU (a lent machine)
        assert placed[0] > 0 and placed[1] == FLASH_AUTO
    else:
        assert placed == (0, FLASH_ON)


def test_doctor_names_this_build_and_where_each_model_runs(example_vault_env, monkeypatch):
    for name, value in example_vault_env.items():
        monkeypatch.setenv(name, value)
    checks = {(c.area, c.name): c for c in diagnose(load_config())}
    backend, devices = checks[("llama.cpp", "backend")], checks[("llama.cpp", "devices")]
    built = describe_backends()
    embed, gen = checks[("models", "embedding model")], checks[("models", "generation model")]
    assert embed.status == "ok" and gen.status == "ok"
    if built.gpu_offload:  # a GPU build that sees a GPU (a lent machine)
        where = built.placement(-1)
        assert backend.status == "ok" and backend.detail.startswith(built.accelerators[0])
        assert f"layers on {where}, flash attention auto" in embed.detail, embed.detail
        assert f"layers on {where}" in gen.detail, gen.detail
        return
    assert built.accelerators == [] and "CPU" in built.built  # this machine's build
    assert backend.status == "ok" and backend.detail.startswith("CPU only")
    assert "CMAKE_ARGS" in backend.detail
    assert devices.detail.startswith("CPU (")
    assert "layers on cpu in numpy" in embed.detail  # the CPU's engine for a float BERT file
    assert "layers on cpu" in gen.detail


def test_doctor_tells_a_gpu_build_that_sees_no_gpu_from_a_cpu_only_build():
    # What ggml's registry reports for a CUDA build on a machine whose GPU is hidden, and
    # for one that sees an H100 (as on the lent machine).
    cpu = Device("CPU", "AMD EPYC", "cpu", 0)
    hidden = {c.name: c for c in backend_checks(Backends(built=["CUDA", "CPU"], devices=[cpu]))}
    assert hidden["backend"].status == "warn"
    assert "sees no GPU" in hidden["backend"].detail and "CUDA" in hidden["backend"].detail
    assert "CMAKE_ARGS" not in hidden["backend"].detail + hidden["backend"].fix
    h100 = Device("CUDA0", "NVIDIA H100 80GB HBM3", "gpu", 85 << 30)
    seen = Backends(built=["CUDA", "CPU"], devices=[h100, cpu], gpu_offload=True)
    checks = {c.name: c for c in backend_checks(seen)}
    assert checks["backend"].status == "ok" and checks["backend"].detail.startswith("CUDA")
    # CUDA's graphs are off wherever ragcli loads llama.cpp, and doctor says so
    assert checks["backend"].detail.endswith("; CUDA graphs off")
    assert "CUDA0 (NVIDIA H100 80GB HBM3, 85 GiB)" in checks["devices"].detail
    assert seen.placement(-1) == "CUDA0:all" and seen.placement(0) == "cpu"


def test_a_prompt_state_saved_on_another_backend_is_not_restored(tmp_path):
    model = builtin_llm_path()
    first = LlamaGenerator(model, n_ctx=512, n_threads=2, cache_dir=tmp_path)
    try:
        first.llm  # noqa: B018 - loads, evaluates the system prompt, saves its state
        here = first.placement  # "cpu" here; "CUDA0:all" on a lent GPU
        assert here == describe_backends().placement(-1) and not first.prefix_cached
    finally:
        first.close()
    [saved] = tmp_path.glob("prefix-*.kv")
    key = saved.stem.removeprefix("prefix-")
    assert _key_for(first, here) == key  # the key names where the state was evaluated
    # The same state, as a run on the other backend would have saved it: under its key.
    other_key = _key_for(first, "CUDA0:all" if here == "cpu" else "cpu")
    assert other_key != key
    saved.rename(tmp_path / f"prefix-{other_key}.kv")
    second = LlamaGenerator(model, n_ctx=512, n_threads=2, cache_dir=tmp_path)
    try:
        second.llm  # noqa: B018
        assert not second.prefix_cached  # missed: evaluated afresh on this backend
    finally:
        second.close()
    assert (tmp_path / f"prefix-{key}.kv").exists()  # and saved under this backend's key again


def _key_for(gen: LlamaGenerator, placement: str) -> str:
    from ragcli.generate.llama import _PrefixCache

    reloaded = LlamaGenerator(gen.model_path, n_ctx=gen.n_ctx, n_threads=2)  # no cache: no state saved
    try:
        tokens = _PrefixCache(reloaded, Path("unused")).prefix_tokens()
    finally:
        reloaded.close()
    return prefix_key(gen.model_path, gen.n_ctx, placement, tokens)


def test_index_takes_the_gpu_layers_setting(tmp_path):
    from typer.testing import CliRunner

    from ragcli.cli import full_app

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Tags\n\nA tag groups notes by topic.\n")
    for flag in ("--gpu-layers", "--n-gpu-layers"):
        result = CliRunner().invoke(full_app(), ["index", str(notes), flag, "0", "--json"])
        assert result.exit_code == 0, result.output
    result = CliRunner().invoke(full_app(), ["index", str(notes), "--gpu-layers", "many"])
    assert result.exit_code == 2  # a usage error, as for any other bad value


def test_watch_takes_the_gpu_layers_setting_and_passes_it_on(tmp_path):
    """`rag watch --gpu-layers N` reaches the process that is started anew: the detached
    watcher and a service file get the same flag (``commands.watch._extra_args``)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for flag in ("--gpu-layers", "--n-gpu-layers"):
        unit = rag("watch", "--print-service", "systemd", flag, "0", notes, text=True)
        assert unit.returncode == 0, unit.stderr
        exec_start = next(line for line in unit.stdout.splitlines() if line.startswith("ExecStart="))
        assert exec_start.split()[-3:] == ["--gpu-layers", "0", str(notes)], exec_start
    bad = rag("watch", "--print-service", "systemd", "--gpu-layers", "many", notes, text=True)
    assert bad.returncode == 2 and "--gpu-layers" in bad.stderr  # a usage error, as for any bad value
