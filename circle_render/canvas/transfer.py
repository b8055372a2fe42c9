"""Large arrays between the host and the GPU through reused page-locked buffers, the host's side
of the copy split over a few threads.

A copy to or from pageable memory (CuPy's ``asarray`` and ``get``) runs at the pace of one
host thread copying through the driver's own staging, about 10 GB/s on the H100's host, where
the GPU's copy engine moves page-locked memory at about 50. Here each of LANES threads owns a
page-locked CHUNK buffer and takes every LANES-th chunk of the array: it copies the chunk
between the user's memory and its buffer (NumPy's copy releases the GIL) and queues the GPU's
copy of it on the current stream, so the lanes' host copies run side by side and overlap the
GPU's. Arrays that are not C-contiguous, and those under UPLOAD_FROM or DOWNLOAD_FROM bytes,
go through CuPy: measured on the H100 against CuPy's copies in one call (`python -m benchmarks
transfer`, docs/canvas.md), 4 lanes uploaded 8, 16 and 64 MB 1.7x, 2.7x and 3.3x faster and 4 MB
as fast, and downloaded 16 and 64 MB 1.6x and 3.0x faster but 4-8 MB 0.7-0.8x as fast (a
download waits for each chunk before copying it out); 8 lanes 4.2x at 64 MB both ways.
"""
from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import numpy as np

CHUNK = 4 << 20                          # bytes of each lane's page-locked buffer
LANES = max(1, min(8, os.cpu_count() or 1))
UPLOAD_FROM = 8 << 20                    # smaller arrays go through CuPy
DOWNLOAD_FROM = 16 << 20
_STAGING = threading.Lock()              # one transfer at a time through a device's buffers


@functools.cache
def _lanes(device: int) -> tuple[tuple[np.ndarray, Any], ...]:
    """LANES page-locked buffers of CHUNK bytes for ``device``, made once a process (at most
    32 MB pinned), each with the event of the last GPU copy that used it."""
    import cupy as cp
    with cp.cuda.Device(device):
        return tuple((np.frombuffer(cp.cuda.alloc_pinned_memory(CHUNK), np.uint8, CHUNK),
                      cp.cuda.Event(block=False, disable_timing=True)) for _ in range(LANES))


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(LANES, thread_name_prefix="circle-render-transfer")


def staged(a: Any, smallest: int) -> bool:
    """Whether ``a`` crosses through the lanes (else through CuPy), from ``smallest`` bytes."""
    return bool(a.nbytes >= smallest and a.flags.c_contiguous)


def upload(host: np.ndarray, device: int | None = None) -> Any:
    """``host`` as a new CuPy array on ``device`` (default: the current one), queued on the
    current stream; ``host`` may change once this returns."""
    import cupy as cp
    with cp.cuda.Device(device):
        if not staged(host, UPLOAD_FROM):
            return cp.asarray(host)
        out = cp.empty(host.shape, host.dtype)
        _run_lanes(host.reshape(-1).view(np.uint8), int(out.data.ptr), to_gpu=True)
        return out


def download(a: Any) -> np.ndarray:
    """A CuPy array as a new NumPy array, copied after the work queued on the current stream."""
    import cupy as cp
    if not staged(a, DOWNLOAD_FROM):
        small: np.ndarray = a.get()
        return small
    out = np.empty(a.shape, a.dtype)
    with cp.cuda.Device(a.device.id):
        _run_lanes(out.reshape(-1).view(np.uint8), int(a.data.ptr), to_gpu=False)
    return out


def _run_lanes(host: np.ndarray, gpu: int, to_gpu: bool) -> None:
    """Copy the bytes ``host`` to or from GPU address ``gpu`` on the current device and stream:
    lane j takes chunks j, j + LANES, ... through its buffer, each after the GPU's last copy
    from or into that buffer has finished (the buffer's event)."""
    import cupy as cp
    device, stream = cp.cuda.Device().id, cp.cuda.get_current_stream()
    size = host.nbytes
    starts = range(0, size, CHUNK)
    h2d, d2h = cp.cuda.runtime.memcpyHostToDevice, cp.cuda.runtime.memcpyDeviceToHost

    def lane(j: int) -> None:
        buffer, event = lanes[j]
        with cp.cuda.Device(device):
            for start in starts[j::LANES]:
                n = min(CHUNK, size - start)
                event.synchronize()                       # the buffer's last copy has finished
                if to_gpu:
                    buffer[:n] = host[start:start + n]
                    cp.cuda.runtime.memcpyAsync(gpu + start, buffer.ctypes.data, n, h2d, stream.ptr)
                    event.record(stream)
                else:
                    cp.cuda.runtime.memcpyAsync(buffer.ctypes.data, gpu + start, n, d2h, stream.ptr)
                    event.record(stream)
                    event.synchronize()
                    host[start:start + n] = buffer[:n]

    with _STAGING:
        lanes = _lanes(device)
        futures = [_pool().submit(lane, j) for j in range(min(LANES, len(starts)))]
        try:
            for f in futures:
                f.result()
        finally:                # interrupted or failed: the buffers are free again only once every lane stops
            wait(futures)
