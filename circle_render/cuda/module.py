"""Loading kernels/*.cu with CuPy: headers inlined (so they are part of what CuPy hashes),
constants passed as -D options, one compiled module per (device, file, options)."""
from __future__ import annotations

import re
from pathlib import Path

from circle_render.constants import compile_defines

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.M)
# exact float32 rounding (no fused multiply-add) so kernels match the NumPy reference bit for bit
BASE_OPTIONS = ("--std=c++17", "--fmad=false")
_modules: dict = {}


def kernel_source(name: str) -> str:
    """The text of kernels/NAME with each ``#include "x.cuh"`` replaced by the header's text
    (each header once, ``#pragma once`` dropped), so CuPy's cache key covers the headers."""
    done: set[str] = set()

    def expand(file: str, stack: tuple[str, ...]) -> str:
        if file in stack:
            raise ValueError(f"include cycle: {' -> '.join(stack + (file,))}")
        text = re.sub(r"^\s*#\s*pragma\s+once\s*$", "", (KERNEL_DIR / file).read_text(), flags=re.M)

        def inline(m: re.Match) -> str:
            header = m.group(1)
            if header in done:
                return f"// ---- {header} (already included) ----"
            done.add(header)
            return f"// ---- {header} ----\n{expand(header, stack + (file,))}\n"
        return _INCLUDE.sub(inline, text)
    return expand(name, ())


def _macro(value) -> str:
    """A Python constant as CUDA source text (floats get an f suffix: float32, not double)."""
    if isinstance(value, float):
        return f"{value!r}f"
    return str(int(value))


def compile_options(extra: dict | None = None) -> tuple[str, ...]:
    defines = {**compile_defines(), **(extra or {})}
    return BASE_OPTIONS + tuple(f"-D{k}={_macro(v)}" for k, v in sorted(defines.items()))


def load_module(name: str, extra: dict | None = None, fmad: bool = False):
    """The compiled ``cupy.RawModule`` for kernels/NAME on the current device (cached).
    fmad=True lets the compiler fuse multiply-adds (faster, no longer bit-exact)."""
    import cupy
    options = compile_options(extra)
    if fmad:
        options = tuple(o for o in options if o != "--fmad=false")
    key = (cupy.cuda.Device().id, name, options)
    if key not in _modules:     # the source (headers inlined) is read only when compiling
        _modules[key] = cupy.RawModule(code=kernel_source(name), options=options)
    return _modules[key]


def kernel_files() -> list[str]:
    """Every kernel source (not headers) in kernels/."""
    return sorted(p.name for p in KERNEL_DIR.glob("*.cu"))


_driver = None


def _libcuda():
    """The driver's cuLaunchKernel and cuCtxSynchronize, called through ctypes."""
    global _driver
    if _driver is None:
        import ctypes
        lib = ctypes.CDLL("libcuda.so.1")
        launch = lib.cuLaunchKernel
        launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        launch.restype = ctypes.c_int
        sync = lib.cuCtxSynchronize
        sync.argtypes, sync.restype = [], ctypes.c_int
        _driver = launch, sync
    return _driver


def _check(status: int) -> None:
    if status != 0:
        import cupy
        raise cupy.cuda.driver.CUDADriverError(status)


def _c_value(a):
    """A kernel argument as a ctypes value: arrays by device pointer, NumPy-typed scalars."""
    import ctypes

    import cupy
    import numpy as np
    if isinstance(a, cupy.ndarray):
        if not a.flags.c_contiguous:
            raise ValueError("kernel array arguments must be C-contiguous")
        return ctypes.c_void_p(a.data.ptr)
    if isinstance(a, np.int32):
        return ctypes.c_int32(int(a))
    if isinstance(a, np.int64):
        return ctypes.c_int64(int(a))
    if isinstance(a, np.float32):
        return ctypes.c_float(float(a))
    raise TypeError(f"kernel scalars must be np.int32, np.int64 or np.float32, got {type(a).__name__}")


def _dims(grid, block, shared_mem: int):
    import ctypes
    grid = tuple(grid) + (1,) * (3 - len(grid))
    block = tuple(block) + (1,) * (3 - len(block))
    return tuple(ctypes.c_uint(v) for v in (*grid, *block, shared_mem))


def function_ptr(function) -> int:
    """The CUfunction of a RawKernel (compiled on first use) or of a cupy Function."""
    return getattr(function, "kernel", function).ptr


class Launch:
    """One kernel launch with its arguments packed once, replayed with little host overhead.

    Replaying costs about 5.2 us a launch on the H100 machine, against 6.0 us for CuPy 14's
    ``RawKernel.__call__``; building one costs more (ctypes objects), so for arrays that change
    on every call, call the RawKernel instead (measured, docs/perf-notes.md). The arrays must stay
    alive (and in place) as long as this object is used; it keeps references to them. Launches
    that run every frame are replayed as a ``Graph``, which costs less again.
    """

    def __init__(self, function, grid, block, args, shared_mem: int = 0):
        import ctypes

        import cupy
        self._keep = args
        self._values = [_c_value(a) for a in args]
        self._params = (ctypes.c_void_p * max(1, len(self._values)))(
            *[ctypes.addressof(v) for v in self._values])
        self._function = function   # keeps the module alive
        self._head = (ctypes.c_void_p(function_ptr(function)), *_dims(grid, block, shared_mem))
        self._tail = (ctypes.cast(self._params, ctypes.c_void_p), None)
        self._args = (*self._head, ctypes.c_void_p(cupy.cuda.get_current_stream().ptr), *self._tail)
        self._launch = _libcuda()[0]

    def __call__(self) -> None:
        _check(self._launch(*self._args))

    def launch_on(self, stream_ptr: int) -> None:
        """Launch into another stream (a Graph captures launches this way)."""
        import ctypes
        _check(self._launch(*self._head, ctypes.c_void_p(stream_ptr), *self._tail))


class Graph:
    """Launches captured once, in order, into a CUDA graph, replayed with one graph launch on
    the stream that is current when it is built (as a ``Launch`` is). A replay costs the host 1.5-3 us on the H100 machine, however many
    kernels it holds, against 6-7 us for each kernel launch (benchmarks/launch_overhead.py). The
    launches' arrays must stay in place, as for ``Launch``; the graph keeps the launches."""

    def __init__(self, launches):
        import cupy
        self.launches = tuple(launches)
        capture = cupy.cuda.Stream(non_blocking=True)   # the legacy stream cannot capture
        capture.begin_capture()
        try:
            for launch in self.launches:
                launch.launch_on(capture.ptr)
        finally:
            graph = capture.end_capture()
        self._stream = cupy.cuda.get_current_stream()
        graph.upload(self._stream)
        self._graph = graph

    def __call__(self) -> None:
        self._graph.launch(self._stream)


def device_synchronize() -> None:
    """Wait for all work on the current device, as the course's timing does."""
    _check(_libcuda()[1]())
