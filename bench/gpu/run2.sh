#!/bin/bash
G=/tmp/gpu; cp .gpu/c2/all-MiniLM-L6-v2.f16.v1.gguf $G/models/ && ls -la $G/models; tail -1 $G/build.log | cut -c1-200; date -u +%T
