#!/bin/bash
# call 5 of session 7: the whole test suite on the CUDA build, with the device image's pytest
# plugins loaded as they are (hypothesis, jaxtyping, pytest-benchmark... some import numpy):
# addopts' -p ragcli.pytest_llama_first must make llama.cpp load first. The image's
# pytest-xdist spreads it over the cores; a worker that segfaults shows as "crashed".
# ../shared gets the small corpora (obsidian-help, pdfs, scifact). BUDGET: seconds it may take.
G=/tmp/gpu; T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-300})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run7b.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
mkdir -p ../shared/corpora && tar xJf .gpu/c4/corpora-small.tar.xz -C ../shared/corpora && ls ../shared/corpora
$PY -m pip list 2>/dev/null | grep -i -E "^(pytest|hypothesis|jaxtyping|numpy|llama)" | tr -s ' ' | tr '\n' ';'; echo
export PATH=$G/venv/bin:$PATH ANONYMIZED_TELEMETRY=False
unset PYTEST_DISABLE_PLUGIN_AUTOLOAD RAG_HOME RAG_MODELS_DIR RAG_LLM_MODEL
RAG_TEST_MODELS_FROM=$G/models timeout $(( $(left) - 10 )) $PY -m pytest -n 14 -v -p no:cacheprovider \
  --timeout 240 --durations 15 tests > $OUT/suite.txt 2>&1; echo "pytest rc $?" >> $OUT/suite.txt
echo "passed $(grep -c ' PASSED' $OUT/suite.txt), failed $(grep -c ' FAILED' $OUT/suite.txt), skipped $(grep -c ' SKIPPED' $OUT/suite.txt), errors $(grep -c ' ERROR' $OUT/suite.txt)"
grep -n -i -E "crashed|Segmentation|rc 139|core dumped|signal 11" $OUT/suite.txt | head -12; grep -E "FAILED|ERROR" $OUT/suite.txt | head -30 | cut -c1-200; tail -5 $OUT/suite.txt | cut -c1-250
