#!/bin/bash
# calls 2 and 3: keep what the call carried (.gpu/c2: MiniLM and a piece of SmolLM2; .gpu/c3: a piece)
G=/tmp/gpu; for f in .gpu/c[23]/*; do case $f in *.gguf) cp $f $G/models/;; *) cp $f $G/kit/;; esac; done
# the F32 MiniLM comes in two halves (kit.sh): joined and checked once the second is here
if [ -f $G/kit/minilm.p2 ]; then M=$G/models/$(cat $G/kit/minilm.name); cat $G/kit/minilm.p1 $G/kit/minilm.p2 > $M
  echo "$(cat $G/kit/minilm.sha)  $M" | sha256sum -c; fi
ls -la $G/models $G/kit; tail -1 $G/build.log | cut -c1-200; date -u +%T
