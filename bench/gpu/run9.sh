#!/bin/bash
# call 4 for a lent GPU when the suite is what is left (#21): join SmolLM2, wait for the CUDA build,
# install it, then the whole test suite as run7b.sh runs it (the image's pytest plugins as they
# are, -n 14, the small corpora as ../shared). BUDGET: seconds the call may take.
G=/tmp/gpu; T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-560})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run9.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
WAIT_LEFT=260 source bench/gpu/call4.sh  # SmolLM2 joined, the build waited for and installed
BUDGET=$(left) bash bench/gpu/run7b.sh
