"""Large arrays between the host and the GPU through reused page-locked buffers, the host's side
of the copy split over a few threads.

A copy to or from pageable memory (CuPy's ``asarray`` and ``get``) runs at the pace of one
host thread copying through the driver's own staging, about 10 GB/s on the H100's host, where
the GPU's copy engine moves page-locked memory at about 50. Here each of LANES threads owns a
page-locked CHUNK buffer and takes every LANES-th chunk of the array: it copies the chunk
between the user's memory and its buffer (NumPy's copy releases the GIL) and queues the GPU's
copy of it on the caller's stream, so the lanes' host copies run side by side and overlap the
GPU's. Arrays that are not C-contiguous, those under UPLOAD_FROM or DOWNLOAD_FROM bytes, and
calls on CUDA's per-thread default stream (a handle that means another stream in each lane) or
after the interpreter has begun to shut down go through CuPy. Measured on the H100 against
CuPy's copies, alternating in one process (`python -m benchmarks transfer`; record
benchmarks/results/H100-canvas-68872fbef3.json, ``transfer_ab``; docs/canvas.md): uploads of
8 MB and more 1.4-3.8x faster, 4 MB as fast; downloads of 16 MB and more 1.2-4.4x faster, but
4-8 MB 0.5-0.8x as fast (a download waits for each chunk before copying it out).
"""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

CHUNK = 4 << 20                          # bytes of each lane's page-locked buffer
UPLOAD_FROM = 8 << 20                    # smaller arrays go through CuPy
DOWNLOAD_FROM = 16 << 20
PER_THREAD_STREAM = 2                    # cudaStreamPerThread's handle


def _cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


# Two lanes at least, whatever the CPUs: one lane's host copy overlaps the other's GPU copy
LANES = max(2, min(8, _cpus()))


@functools.cache
def _device_lock(device: int) -> threading.Lock:
    """One transfer at a time through a device's buffers."""
    return threading.Lock()


@functools.cache
def _lanes(device: int) -> tuple[tuple[np.ndarray, Any], ...]:
    """LANES page-locked buffers of CHUNK bytes for ``device``, made once a process (at most
    32 MB pinned a device), each with the event of the last GPU copy that used it."""
    import cupy as cp
    with cp.cuda.Device(device):
        return tuple((np.frombuffer(cp.cuda.alloc_pinned_memory(CHUNK), np.uint8, CHUNK),
                      cp.cuda.Event(block=False, disable_timing=True)) for _ in range(LANES))


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(LANES, thread_name_prefix="circle-render-transfer")


class _LanesUnavailable(Exception):
    """The lanes cannot take this transfer (the interpreter is shutting down): copy through CuPy."""


def staged(a: Any, smallest: int) -> bool:
    """Whether ``a`` may cross through the lanes (else through CuPy), from ``smallest`` bytes."""
    return bool(a.nbytes >= smallest and a.flags.c_contiguous)


def upload(host: np.ndarray, device: int | None = None) -> Any:
    """``host`` as a new CuPy array on ``device`` (default: the current one), queued on the
    current stream; ``host`` may change once this returns."""
    import cupy as cp
    with cp.cuda.Device(device):
        if staged(host, UPLOAD_FROM):
            out = cp.empty(host.shape, host.dtype)
            try:
                _run_lanes(host.reshape(-1).view(np.uint8), int(out.data.ptr), to_gpu=True)
                return out
            except _LanesUnavailable:
                pass
        return cp.asarray(host)


def download(a: Any) -> np.ndarray:
    """A CuPy array as a new NumPy array, copied after the work queued on the current stream."""
    import cupy as cp
    if staged(a, DOWNLOAD_FROM):
        out = np.empty(a.shape, a.dtype)
        try:
            with cp.cuda.Device(a.device.id):
                _run_lanes(out.reshape(-1).view(np.uint8), int(a.data.ptr), to_gpu=False)
            return out
        except _LanesUnavailable:
            pass
    got: np.ndarray = a.get()
    return got


def _run_lanes(host: np.ndarray, gpu: int, to_gpu: bool) -> None:
    """Copy the bytes ``host`` to or from GPU address ``gpu`` on the current device and stream:
    lane j takes chunks j, j + LANES, ... through its buffer, each after the GPU's last copy
    from or into that buffer has finished (the buffer's event). Returns, or raises, only once
    every lane has stopped: an error or an interrupt stops the others at their next chunk.
    _LanesUnavailable where nothing was copied and the caller should copy through CuPy."""
    import cupy as cp
    device, stream = cp.cuda.Device().id, cp.cuda.get_current_stream()
    if stream.ptr == getattr(cp.cuda.runtime, "streamPerThread", PER_THREAD_STREAM):
        raise _LanesUnavailable("the per-thread default stream is each lane's own")
    size = host.nbytes
    starts = range(0, size, CHUNK)
    h2d, d2h = cp.cuda.runtime.memcpyHostToDevice, cp.cuda.runtime.memcpyDeviceToHost
    stop = threading.Event()

    def lane(buffer: np.ndarray, event: Any, first: int) -> None:
        with cp.cuda.Device(device):
            for start in starts[first::LANES]:
                if stop.is_set():
                    return
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

    with _device_lock(device):
        lanes = _lanes(device)
        futures: list[Future[None]] = []
        try:
            for j in range(min(LANES, len(starts))):
                futures.append(_submit(lane, *lanes[j], j))
            for f in futures:
                f.result()
        except BaseException:
            stop.set()
            raise
        finally:         # the buffers (and ``host``, ``gpu``) are free again only once every lane stops
            _wait_all(futures, stop)


def _submit(lane: Callable[..., None], *args: Any) -> Future[None]:
    """The lane queued on the pool; _LanesUnavailable where the pool takes no more work (the
    interpreter is shutting down: an atexit handler saving a picture)."""
    try:
        return _pool().submit(lane, *args)
    except RuntimeError as e:
        raise _LanesUnavailable(str(e)) from None


def _wait_all(futures: list[Future[None]], stop: threading.Event) -> None:
    """Wait for every lane, through further interrupts (each stops the lanes again)."""
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:
            stop.set()
