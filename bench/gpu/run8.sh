#!/bin/bash
# call 4 of session 8 on a GPU (wave 3 session 19): join SmolLM2, wait for the CUDA build, then
# (most important first) `rag index` of all of MDN in a new index with phase two beside phase one
# (index_overlap auto: on, the layers being on CUDA0) to the end, timed from the start of the
# command; `rag status`; two cold `rag ask --json` on that index (the model's first token after
# the quotes); `rag doctor`. BUDGET: seconds the call may take.
G=/tmp/gpu; R=$(pwd); T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-570})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run8.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
stamp() { echo "## $(date -u +%T) ($(left) s left) $*"; }
source bench/gpu/call4.sh  # SmolLM2 joined, the build waited for and installed
export PYTHONPATH=$R RAG_BENCH_SHARED=$G/shared RAG_BENCH_MODELS=$G/models RAG_MODELS_DIR=$G/models ANONYMIZED_TELEMETRY=False RAG_LLM_MODEL=$SMOL
uptime
stamp "all of MDN, new index, index_overlap auto"
export RAG_HOME=$G/h-mdn8; S=$(date +%s.%N)
timeout $(( $(left) - 60 )) $PY -m ragcli.cli index $G/shared/corpora/mdn/files/en-us --json > $OUT/mdn8.json 2>$OUT/mdn8.err; rc=$?
echo "mdn rc $rc after $(python3 -c "import time;print(round(time.time()-$S,1))") s"
timeout 20 $PY -m ragcli.cli status --json > $OUT/mdn8_status.json 2>&1; head -c 1500 $OUT/mdn8_status.json; echo; head -c 1500 $OUT/mdn8.json; echo; tail -3 $OUT/mdn8.err | cut -c1-300
for q in "What is recursion?" "How do I center an element with CSS grid?"; do
  stamp "cold ask: $q"; S=$(date +%s.%N)
  timeout 40 $PY -m ragcli.cli ask --json "$q" > $OUT/ask.json 2>/dev/null; echo "ask rc $? wall $(python3 -c "import time;print(round(time.time()-$S,2))") s"
  $PY -c "import json;d=json.load(open('$OUT/ask.json'));print({k:v for k,v in d.get('timings',{}).items()})" 2>&1 | tail -1
done
stamp "doctor"; timeout 60 $PY -m ragcli.cli doctor > $OUT/doctor.txt 2>&1; echo "doctor rc $?"; grep -i "backend\|devices\|layers on\|flash\|engine" $OUT/doctor.txt | head -10
stamp "end"
