#!/bin/bash
G=/tmp/gpu; cp .gpu/c3/smol.aa $G/ && ls -la $G/smol.aa; tail -1 $G/build.log | cut -c1-200; date -u +%T
# the machine's python3 is itself a venv (/opt/torch/.venv): ours sees its numpy through a .pth
echo /opt/torch/.venv/lib/python3.12/site-packages > $($G/venv/bin/python -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")/torchvenv.pth
