#!/bin/bash
# call 1: start the CUDA build in the background, make the venv, unpack MDN
G=/tmp/gpu; mkdir -p $G/lcw $G/shared/corpora/mdn/files $G/models
R=$(pwd)
date -u +%T
tar xJf .gpu/c1/llama_cpp_python-0.3.36-trim.tar.xz -C $G
nproc; nvidia-smi -L; nvcc --version | tail -1
setsid nohup bash -c "cd $G && CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90' CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip wheel --no-deps --no-build-isolation -w $G/lcw $G/llama_cpp_python-0.3.36 > $G/build.log 2>&1; echo \$? > $G/build.rc" > /dev/null 2>&1 < /dev/null &
python3 -m venv --system-site-packages $G/venv
$G/venv/bin/python -m pip install -q --no-index --no-deps .gpu/c1/whl/*.whl > $G/pip.log 2>&1; echo "pip rc $?"; tail -3 $G/pip.log
tar xJf .gpu/c1/mdn.tar.xz -C $G/shared/corpora/mdn/files; find $G/shared/corpora/mdn/files -name '*.md' | wc -l
$G/venv/bin/python -c "import numpy, typer, rich, chromadb, click; print('numpy', numpy.__version__, 'typer', typer.__version__, 'chromadb', chromadb.__version__)"
$G/venv/bin/python -V
sleep 2; tail -2 $G/build.log; date -u +%T
