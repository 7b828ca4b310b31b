#!/bin/bash
# call 5 of session 7: `rag index` of all of MDN on the CUDA build (a new index), then status.
G=/tmp/gpu; T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-300})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run7b.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
export PYTHONPATH=$(pwd) RAG_MODELS_DIR=$G/models ANONYMIZED_TELEMETRY=False RAG_HOME=$G/h-mdn7 RAG_LLM_MODEL=$G/models/SmolLM2-135M-Instruct.Q4_1.gguf
uptime; S=$(date +%s)
timeout $(( $(left) - 20 )) $PY -m ragcli.cli index $G/shared/corpora/mdn/files/en-us --json > $OUT/mdn7.json 2>$OUT/mdn7.err; echo "mdn rc $? after $(( $(date +%s) - S )) s"
timeout 15 $PY -m ragcli.cli status --json > $OUT/mdn7_status.json 2>&1; head -c 1200 $OUT/mdn7_status.json; echo; head -c 800 $OUT/mdn7.json; tail -3 $OUT/mdn7.err
