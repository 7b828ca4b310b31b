#!/bin/bash
# call 1: start the CUDA build in the background, make the venv, unpack MDN, keep c1's pieces
G=/tmp/gpu; mkdir -p $G/lcw $G/shared/corpora/mdn/files $G/models $G/kit
R=$(pwd)
date -u +%T
tar xJf .gpu/c1/llama_cpp_python-0.3.36-trim.tar.xz -C $G
nproc; nvidia-smi -L; nvcc --version | tail -1
setsid nohup bash -c "cd $G && CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90' CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip wheel --no-deps --no-build-isolation -w $G/lcw $G/llama_cpp_python-0.3.36 > $G/build.log 2>&1; echo \$? > $G/build.rc" > /dev/null 2>&1 < /dev/null &
python3 -m venv --system-site-packages $G/venv
# the machine's python3 is itself a venv (/opt/torch/.venv): ours sees its numpy through a .pth
echo /opt/torch/.venv/lib/python3.12/site-packages > $($G/venv/bin/python -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")/torchvenv.pth
$G/venv/bin/python -m pip install -q --no-index --no-deps .gpu/c1/whl/*.whl > $G/pip.log 2>&1; echo "pip rc $?"; tail -3 $G/pip.log
tar xJf .gpu/c1/mdn.tar.xz -C $G/shared/corpora/mdn/files; find $G/shared/corpora/mdn/files -name '*.md' | wc -l
cp .gpu/c1/smol.* $G/kit/
$G/venv/bin/python -c "import numpy, typer, rich, chromadb, click; print('numpy', numpy.__version__, 'typer', typer.__version__, 'chromadb', chromadb.__version__)"
sleep 2; tail -2 $G/build.log | cut -c1-200; date -u +%T
