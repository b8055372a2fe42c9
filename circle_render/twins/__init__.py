"""NumPy twins of the CUDA kernels: one module per kernel file (twins/bin.py for kernels/bin.cu,
...), one function per kernel, named after it and taking the geometry as arguments, so that a
test can run a kernel and its twin on the same input with any tuned constants and compare.

The naming rule is checked by tests/cuda/test_twins.py: every ``extern "C"`` kernel has a function
of its name in its file's twin module, or an entry in that module's NO_TWIN saying why not.
Integer stages (binning, scans) are compared exactly; images within the course's tolerance,
or exactly where both sides round the same way (kernels compiled without contraction).
"""
from __future__ import annotations

import importlib
from types import ModuleType


def twin_module(kernel_file: str) -> ModuleType:
    """The twin module of kernels/NAME.cu."""
    return importlib.import_module(f"circle_render.twins.{kernel_file.removesuffix('.cu')}")
