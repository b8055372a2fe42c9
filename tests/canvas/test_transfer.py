"""canvas/transfer.py's lanes without a GPU: CuPy replaced by a stand-in whose "GPU memory" is
host memory and whose asynchronous copies are memmoves, so that the chunking, the lanes'
threads, errors, interrupts and the fallbacks to CuPy's own copies are tested here (the real
copies: tests/canvas/test_canvas_gpu.py)."""
import ctypes
import threading
import time
import types

import numpy as np
import pytest

from circle_render.canvas import transfer


class FakeArray:
    """A CuPy-like array over host memory: .data.ptr, .device.id, .get()."""

    def __init__(self, values):
        self.values = np.ascontiguousarray(values)
        self.data = types.SimpleNamespace(ptr=self.values.ctypes.data)
        self.device = types.SimpleNamespace(id=0)
        self.shape, self.dtype, self.nbytes, self.flags = (self.values.shape, self.values.dtype, self.values.nbytes,
                                                           self.values.flags)

    def get(self):
        return self.values.copy()


class FakeCupy:
    """What transfer.py calls of CuPy. ``fail_at``: the copy (counted from 1) that raises;
    ``delay``: seconds each copy takes; ``stream_ptr``: the current stream's handle."""

    def __init__(self, fail_at=None, delay=0.0, stream_ptr=0):
        self.copies, self.asarray_calls, self.active, self.most_active = 0, 0, 0, 0
        self.fail_at, self.delay, self.lock = fail_at, delay, threading.Lock()
        fake = self

        class Device:
            def __init__(self, device=None):
                self.id = 0 if device is None else device

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        class Event:
            def __init__(self, **kw):
                pass

            def record(self, stream):
                pass

            def synchronize(self):
                pass

        def memcpy_async(dst, src, n, kind, stream):
            with fake.lock:
                fake.copies += 1
                k = fake.copies
                fake.active += 1
                fake.most_active = max(fake.most_active, fake.active)
            try:
                time.sleep(fake.delay)
                if k == fake.fail_at:
                    raise RuntimeError("cudaErrorIllegalAddress (stand-in)")
                ctypes.memmove(dst, src, n)
            finally:
                with fake.lock:
                    fake.active -= 1

        runtime = types.SimpleNamespace(memcpyHostToDevice=1, memcpyDeviceToHost=2, memcpyAsync=memcpy_async,
                                        streamPerThread=2)
        self.cuda = types.SimpleNamespace(
            Device=Device, Event=Event, runtime=runtime, alloc_pinned_memory=lambda n: bytearray(n),
            get_current_stream=lambda: types.SimpleNamespace(ptr=stream_ptr))

    def empty(self, shape, dtype):
        return FakeArray(np.full(shape, -7, dtype))

    def asarray(self, host):
        self.asarray_calls += 1
        return FakeArray(np.array(host))


@pytest.fixture
def fake(monkeypatch):
    def install(**kw):
        cp = FakeCupy(**kw)
        monkeypatch.setitem(__import__("sys").modules, "cupy", cp)
        monkeypatch.setattr(transfer, "LANES", 3)
        monkeypatch.setattr(transfer, "CHUNK", 1 << 12)
        monkeypatch.setattr(transfer, "UPLOAD_FROM", 1 << 12)
        monkeypatch.setattr(transfer, "DOWNLOAD_FROM", 1 << 12)
        transfer._lanes.cache_clear()
        transfer._device_lock.cache_clear()
        return cp
    yield install
    transfer._lanes.cache_clear()
    transfer._device_lock.cache_clear()


@pytest.mark.parametrize("floats", [1024, 1024 * 7 + 3, 1024 * 2 + 1, 1024 * 12])
def test_arrays_cross_whole_chunk_by_chunk(fake, floats):
    """Arrays of one chunk, of several with a partial last one, of fewer chunks than lanes and
    of more: every byte crosses, both ways, through the lanes (not CuPy's copies)."""
    cp = fake()
    host = np.random.default_rng(floats).random(floats, dtype=np.float32)
    dev = transfer.upload(host)
    assert np.array_equal(dev.values, host) and cp.asarray_calls == 0
    assert cp.copies == -(-host.nbytes // transfer.CHUNK)
    assert np.array_equal(transfer.download(dev), host)


def test_small_strided_and_per_thread_stream_arrays_go_through_cupy(fake):
    cp = fake()
    small = np.ones(100, np.float32)
    strided = np.ones((4096, 2), np.float32)[:, 0]
    for a in (small, strided):
        assert np.array_equal(transfer.upload(a).values, a)
    assert cp.asarray_calls == 2 and cp.copies == 0
    cp = fake(stream_ptr=2)               # cudaStreamPerThread: each lane's own stream, not the caller's
    big = np.ones(4096, np.float32)
    assert np.array_equal(transfer.upload(big).values, big) and cp.asarray_calls == 1 and cp.copies == 0
    assert np.array_equal(transfer.download(FakeArray(big)), big) and cp.copies == 0


def test_a_failed_copy_stops_every_lane_before_the_error_is_raised(fake):
    """A lane's error reaches the caller only once no lane copies any more (the buffers and the
    arrays are then free), the other lanes stop at their next chunk, and the next transfer works."""
    cp = fake(fail_at=2, delay=0.01)
    host = np.ones(1024 * 30, np.float32)              # 30 chunks over 3 lanes
    with pytest.raises(RuntimeError, match="stand-in"):
        transfer.upload(host)
    assert cp.active == 0 and cp.copies < 30 and cp.most_active > 1
    cp.fail_at = None
    assert np.array_equal(transfer.upload(host).values, host)


def test_after_the_pool_is_shut_down_transfers_go_through_cupy(fake, monkeypatch):
    """At interpreter shutdown (an atexit handler saving a picture) the pool takes no work."""
    cp = fake()
    closed = transfer.ThreadPoolExecutor(1)
    closed.shutdown()
    monkeypatch.setattr(transfer, "_pool", lambda: closed)
    host = np.arange(4096, dtype=np.float32)
    assert np.array_equal(transfer.upload(host).values, host) and cp.asarray_calls == 1
    assert np.array_equal(transfer.download(FakeArray(host)), host)


def test_lanes_are_at_least_two():
    assert 2 <= transfer.LANES <= 8
