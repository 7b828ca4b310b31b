"""A pytest plugin that makes llama.cpp's library load before any plugin's native imports.

pytest imports the plugins installed in the environment (hypothesis, jaxtyping,
pytest-benchmark...) before any conftest, and some of them import numpy. On a CUDA build of
llama.cpp that crashes the first model load (``ragcli.native``); a lent H200's suite died so in
its 4th test. The project's ``addopts`` name this module with ``-p``, which pytest imports
before the installed plugins, so whatever plugins a machine has, llama.cpp comes first.
"""

from ragcli.native import llama_first

llama_first()
