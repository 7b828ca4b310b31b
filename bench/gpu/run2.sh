#!/bin/bash
# calls 2 and 3: keep what the call carried (.gpu/c2: MiniLM and a piece of SmolLM2; .gpu/c3: a piece)
G=/tmp/gpu; for f in .gpu/c[23]/*; do case $f in *.gguf) cp $f $G/models/;; *) cp $f $G/kit/;; esac; done
ls -la $G/models $G/kit; tail -1 $G/build.log | cut -c1-200; date -u +%T
