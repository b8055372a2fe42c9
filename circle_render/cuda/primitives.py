"""The assignment's GPU warm-ups on CuPy: SAXPY, exclusive scan and find_repeats.

Each function takes and returns CuPy device arrays; its kernel's NumPy twin is in
circle_render/twins/ (scan.py, saxpy.py), which the tests compare it with. The kernels are
kernels/saxpy.cu and kernels/scan.cu; the scan's block step is kernels/scan.cuh's
``block_exclusive_scan``, the one the renderers use.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from circle_render.constants import SAXPY_BLOCKS_PER_SM, SAXPY_THREADS, SCAN_THREADS, compile_defines
from circle_render.cuda.module import load_module
from circle_render.util import ceil_div

TILE_ITEMS = compile_defines()["TILE_ITEMS"]     # ints a scan block takes
MAX_SCAN_LENGTH = 2**31 - 1     # indices and sums are int32


# ---------------------------------------------------------------- device versions

def _device_array(x: Any, dtype: type[np.generic], name: str) -> Any:
    """``x`` as a contiguous, 16-byte aligned CuPy array of ``dtype`` (copied only if needed)."""
    import cupy as cp
    x = cp.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {x.shape}")
    if x.dtype != dtype:
        raise TypeError(f"{name} must be {np.dtype(dtype).name}, got {x.dtype}")
    if not x.flags.c_contiguous or x.data.ptr % 16:
        x = x.copy()                        # a fresh allocation is aligned
    return x


@functools.cache
def _kernel(file: str, name: str, device: int) -> Any:
    """A compiled kernel, looked up once per device. CuPy's RawKernel call is the cheapest way
    to launch with arguments that change every call (benchmarks/launch_overhead.py)."""
    return load_module(file).get_function(name)


@functools.cache
def _sm_count(device: int) -> int:
    import cupy as cp
    return int(cp.cuda.Device(device).attributes["MultiProcessorCount"])


def _device() -> int:
    import cupy as cp
    return int(cp.cuda.runtime.getDevice())


class _ScanState:
    """The scan's bookkeeping for one device and stream, kept between calls: tile status
    words, a tile counter that only grows, and the epoch that tells this launch's status
    words from older ones. Nothing is allocated or zeroed per call."""

    MAX_EPOCH = 2**30 - 1             # the epoch has 30 bits in a status word

    def __init__(self) -> None:
        import cupy as cp
        self.tiles: Any = None                   # (>= tiles,) uint64 status words, grown as needed
        self.counter = cp.zeros(1, dtype=np.uint64)
        # find_repeats writes its count straight into pinned host memory (mapped: with unified
        # addressing the device uses the host pointer), so no copy is queued after the kernel
        self._pinned = cp.cuda.alloc_pinned_memory(4)
        self.count_host = np.frombuffer(self._pinned, dtype=np.int32, count=1)
        self.epoch = self.issued = 0

    def next_launch(self, tiles: int) -> tuple[np.int64, np.int32]:
        """(first tile id, epoch) for a launch of ``tiles`` tiles."""
        import cupy as cp
        if self.tiles is None or self.tiles.size < tiles or self.epoch == self.MAX_EPOCH:
            self.tiles = cp.zeros(max(tiles, 4096), dtype=np.uint64)
            self.epoch = 0
        self.epoch += 1
        base, self.issued = self.issued, self.issued + tiles
        return np.int64(base), np.int32(self.epoch)


_scan_states: dict[tuple[int, int], _ScanState] = {}      # (device, stream) -> its state


def _scan_state() -> _ScanState:
    import cupy as cp
    key = (_device(), cp.cuda.get_current_stream().ptr)
    if key not in _scan_states:
        _scan_states[key] = _ScanState()
    return _scan_states[key]


def saxpy(a: float, x: Any, y: Any, out: Any = None) -> Any:
    """a * x + y on the GPU (float32 arrays of equal length); ``out`` may be given to reuse it."""
    import cupy as cp
    x, y = _device_array(x, np.float32, "x"), _device_array(y, np.float32, "y")
    if x.size != y.size:
        raise ValueError(f"x and y differ in length: {x.size} vs {y.size}")
    if out is None:
        out = cp.empty_like(x)
    elif out.shape != x.shape or out.dtype != np.float32 or out.data.ptr % 16:
        raise ValueError("out must be an aligned float32 array shaped like x")
    n = x.size
    if n:
        dev = _device()
        blocks = max(1, min(ceil_div(n, 4 * SAXPY_THREADS), SAXPY_BLOCKS_PER_SM * _sm_count(dev)))
        _kernel("saxpy.cu", "saxpy_f32", dev)((blocks,), (SAXPY_THREADS,),
                                               (np.int64(n), np.float32(a), x, y, out))
    return out


def _scan_launch(name: str, x: Any, out: Any, with_count: bool = False) -> _ScanState:
    tiles = ceil_div(x.size, TILE_ITEMS)
    state = _scan_state()
    base, epoch = state.next_launch(tiles)
    args: tuple[Any, ...] = (x, out, np.int64(x.size), state.tiles, state.counter, base, epoch)
    if with_count:
        args += (np.uint64(state.count_host.ctypes.data),)
    _kernel("scan.cu", name, _device())((tiles,), (SCAN_THREADS,), args)
    return state


def _scan_input(x: Any) -> Any:
    x = _device_array(x, np.int32, "x")
    if x.size > MAX_SCAN_LENGTH:
        raise ValueError(f"at most {MAX_SCAN_LENGTH} elements (int32 indices), got {x.size}")
    return x


def exclusive_scan(x: Any) -> Any:
    """Exclusive prefix sum of an int32 device array (any length): out[i] = sum(x[:i])."""
    import cupy as cp
    x = _scan_input(x)
    out = cp.empty(x.size, dtype=np.int32)
    if x.size:
        _scan_launch("exclusive_scan_i32", x, out)
    return out


def find_repeats(x: Any) -> tuple[Any, int]:
    """(indices, count): the i with x[i] == x[i+1], ascending, as an int32 device array of
    length count. Reading the count back waits for the GPU."""
    import cupy as cp
    x = _scan_input(x)
    if x.size < 2:
        return cp.empty(0, dtype=np.int32), 0
    out = cp.empty(x.size - 1, dtype=np.int32)
    state = _scan_launch("find_repeats_i32", x, out, with_count=True)
    cp.cuda.get_current_stream().synchronize()
    k = int(state.count_host[0])
    return out[:k], k
