#!/bin/bash
# call 4: join SmolLM2, wait for the CUDA build, install it, then measure (most important first)
G=/tmp/gpu; R=$(pwd); T0=$(date +%s); DEADLINE=$((T0+575)); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run4.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
stamp() { echo "## $(date -u +%T) ($(left) s left) $*"; }
$PY -m pip install -q --no-index --no-deps .gpu/c4/whl/*.whl; $PY -c "import chromadb, numpy; print(chromadb.__version__, numpy.__version__)"
cp .gpu/c4/smol.ab $G/ && cat $G/smol.aa $G/smol.ab > $G/models/SmolLM2-135M-Instruct.Q4_1.gguf
echo "$(cat .gpu/c4/smol.sha)  $G/models/SmolLM2-135M-Instruct.Q4_1.gguf" | sha256sum -c
stamp "waiting for the build"
while [ ! -f $G/build.rc ] && [ $(left) -gt 240 ]; do sleep 3; done
stamp "build rc $(cat $G/build.rc 2>/dev/null)"; tail -3 $G/build.log | cut -c1-300; ls -la $G/lcw
cp $G/build.log $OUT/build.log
$PY -m pip install -q --no-index --no-deps $G/lcw/*.whl || { echo "no wheel"; exit 3; }
export PYTHONPATH=$R RAG_BENCH_SHARED=$G/shared RAG_BENCH_MODELS=$G/models RAG_MODELS_DIR=$G/models ANONYMIZED_TELEMETRY=False RAG_LLM_MODEL=$G/models/SmolLM2-135M-Instruct.Q4_1.gguf
M=$G/models/all-MiniLM-L6-v2.f16.v1.gguf
LOADC="import llama_cpp as lc; lc.llama_backend_init(); p=lc.llama_model_default_params(); p.n_gpu_layers=0; m=lc.llama_model_load_from_file(b'$M', p); print('loaded', bool(m))"
t() { local name=$1; shift; timeout 60 "$@" > /tmp/t.out 2>&1; echo "== $name: rc=$?  $(grep -v '^llama\|^load\|^print_info\|^\.' /tmp/t.out | tail -1 | cut -c1-200)"; }
stamp "segfault: which first load crashes"
t "numpy first" $PY -c "import numpy; $LOADC"
t "llama_cpp first" $PY -c "$LOADC"
t "ragcli llama_first, then numpy" $PY -c "from ragcli.native import llama_first; llama_first(); import numpy; $LOADC"
NL=$($PY -c "import importlib.util,os; print(os.path.join(os.path.dirname(os.path.dirname(importlib.util.find_spec('numpy').origin)),'numpy.libs'))")
ls $NL
t "numpy.libs only, RTLD_GLOBAL" $PY -c "import ctypes,glob; [ctypes.CDLL(f, mode=ctypes.RTLD_GLOBAL) for f in sorted(glob.glob('$NL/*.so*'), key=lambda f: 'openblas' in f)]; $LOADC"
t "numpy.libs only, RTLD_LOCAL" $PY -c "import ctypes,glob; [ctypes.CDLL(f) for f in sorted(glob.glob('$NL/*.so*'), key=lambda f: 'openblas' in f)]; $LOADC"
t "numpy first, OPENBLAS_NUM_THREADS=1" env OPENBLAS_NUM_THREADS=1 $PY -c "import numpy; $LOADC"
t "pydantic_core first" $PY -c "import pydantic_core; $LOADC"
t "torch first" $PY -c "import torch; $LOADC"
if command -v gdb > /dev/null; then timeout 60 gdb -q -batch -ex run -ex bt --args $PY -c "import numpy; $LOADC" 2>&1 | grep -A25 "SIGSEGV" | head -30; else echo "no gdb"; fi
stamp "doctor"
RAG_HOME=$G/h-doc timeout 60 $PY -m ragcli.cli doctor > $OUT/doctor.txt 2>&1; echo "doctor rc $?"; cat $OUT/doctor.txt | head -60
stamp "bench_gpu"
timeout $(( $(left) - 150 )) $PY bench/bench_gpu.py --notes 1000 --chunks 4000 --rounds 2 2>&1 | grep -v "^llama_\|^load\|^print_info" | tee $OUT/bench_gpu.txt | tail -40
stamp "smoke: every command on the CUDA build"
export RAG_HOME=$G/h-smoke RAG_DAEMON=off
for c in "index $R/examples/vault" "search DPR --json" "status" "models" "doctor --json"; do timeout 90 $PY -m ragcli.cli $c > /tmp/s.out 2>&1; echo "rag $c: rc=$?"; done
timeout 90 $PY -m ragcli.cli ask "what is DPR?" > $OUT/ask.txt 2>&1; echo "rag ask: rc=$?"; head -12 $OUT/ask.txt
echo "what is DPR?" | timeout 90 $PY -m ragcli.cli chat > $OUT/chat.txt 2>&1; echo "rag chat: rc=$?"
timeout 90 $PY -m ragcli.cli ask "what is DPR?" --json > $OUT/ask.json 2>/dev/null; echo "rag ask --json (kv cache reused): rc=$?"
stamp "profile: rag index of 1000 MDN notes (main thread)"
$PY bench/gpu/slice.py $G/shared/corpora/mdn/files/en-us $G/slice1000 1000
RAG_HOME=$G/h-prof timeout $(( $(left) - 60 )) $PY bench/gpu/prof_index.py $OUT/index1000.prof index $G/slice1000 --json > $OUT/prof.txt 2>&1; echo "rc $?"; head -5 $OUT/prof.txt | cut -c1-400; grep -m1 -A45 "Ordered by: cumulative" $OUT/prof.txt | cut -c1-160
stamp "all of MDN, until the deadline"
RAG_HOME=$G/h-mdn timeout $(( $(left) - 15 )) $PY -m ragcli.cli index $G/shared/corpora/mdn/files/en-us --json > $OUT/mdn.json 2>$OUT/mdn.err; echo "mdn rc $?"; stamp "mdn stopped"
RAG_HOME=$G/h-mdn timeout 20 $PY -m ragcli.cli status --json > $OUT/mdn_status.json 2>&1; head -c 1500 $OUT/mdn_status.json; head -c 600 $OUT/mdn.json
stamp "end"
