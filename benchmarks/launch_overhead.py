"""What a launch and a synchronize cost the host, through CuPy's API (what the renderers use)
against the driver called straight through ctypes (what they used before), in the same run:
an empty kernel launched, replayed as a graph captured either way, and synchronized either
way; rand10k's draw replayed as a graph either way; and rand10k's frames the course's way.

    python -m benchmarks launch [-o launch.json]
"""
import argparse
import ctypes
import json

import numpy as np

from circle_render.cuda.fast import FastCudaRenderer
from circle_render.cuda.module import Graph, Launch, device_synchronize
from circle_render.gpu import gpu_name
from circle_render.scenes import make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.frames import run_frames
from circle_render.timing.timer import wall_times

NOP = 'extern "C" __global__ void nop(float* p, int n) { if (threadIdx.x == 0 && n < 0) p[0] = 1.f; }'


class DriverLaunch:
    """The same launch through ctypes: cuLaunchKernel with its argument block packed once."""

    lib = None                           # libcuda, opened by the first DriverLaunch

    def __init__(self, launch: Launch):
        import cupy as cp
        if DriverLaunch.lib is None:
            lib = DriverLaunch.lib = ctypes.CDLL("libcuda.so.1")
            lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
            lib.cuCtxSynchronize.argtypes = []
        values = []
        for a in launch.args:
            if isinstance(a, cp.ndarray):
                values.append(ctypes.c_void_p(a.data.ptr))
            elif isinstance(a, np.float32):
                values.append(ctypes.c_float(float(a)))
            else:
                values.append({np.int32: ctypes.c_int32, np.int64: ctypes.c_int64,
                               np.uint64: ctypes.c_uint64}[type(a)](int(a)))
        self._values = values
        self._params = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
        grid = tuple(launch.grid) + (1,) * (3 - len(launch.grid))
        block = tuple(launch.block) + (1,) * (3 - len(launch.block))
        kernel = launch.kernel.kernel if hasattr(launch.kernel, "kernel") else launch.kernel
        self._head = (ctypes.c_void_p(kernel.ptr),
                      *[ctypes.c_uint(v) for v in (*grid, *block, launch.shared_mem)])
        self.on(cp.cuda.get_current_stream().ptr)

    def on(self, stream_ptr: int):
        self._args = (*self._head, ctypes.c_void_p(stream_ptr), ctypes.cast(self._params, ctypes.c_void_p), None)
        return self

    def __call__(self) -> None:
        assert self.lib.cuLaunchKernel(*self._args) == 0


def driver_graph(launches):
    """A graph captured from DriverLaunch calls (as the renderers captured them before)."""
    import cupy as cp
    capture = cp.cuda.Stream(non_blocking=True)
    drivers = [DriverLaunch(launch).on(capture.ptr) for launch in launches]
    capture.begin_capture()
    for d in drivers:
        d()
    graph = capture.end_capture()
    stream = cp.cuda.get_current_stream()
    graph.upload(stream)
    return lambda: graph.launch(stream)


def driver_sync() -> None:
    assert DriverLaunch.lib.cuCtxSynchronize() == 0


def host_us(fn, sync, reps=300):
    """Median and min microseconds of fn() + sync(), each call after an idle device."""
    t = wall_times(fn, reps, sync=sync, before=device_synchronize)
    return {"median_us": round(t.median * 1e3, 2), "min_us": round(t.min * 1e3, 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    import cupy as cp
    f = cp.RawModule(code=NOP).get_function("nop")
    buf = cp.zeros(4, dtype=np.float32)
    launch = Launch(f, (1,), (32,), (buf, np.int32(4)))
    driver = DriverLaunch(launch)
    graph, dgraph = Graph([launch]), driver_graph([launch])
    none = lambda: None
    out = {"gpu": gpu_name(), "commit": current_commit(), "empty kernel": {
        "cupy call, host only": host_us(launch, none),
        "ctypes launch, host only": host_us(driver, none),
        "cupy-captured graph replay, host only": host_us(graph, none),
        "ctypes-captured graph replay, host only": host_us(dgraph, none),
        "cupy call + cupy synchronize": host_us(launch, device_synchronize),
        "ctypes launch + ctypes synchronize": host_us(driver, driver_sync),
        "cupy graph replay + cupy synchronize": host_us(graph, device_synchronize),
        "ctypes graph replay + ctypes synchronize": host_us(dgraph, driver_sync),
        "cupy synchronize alone": host_us(none, device_synchronize),
        "ctypes synchronize alone": host_us(none, driver_sync)}}
    scene = make_scene("rand10k")
    r = FastCudaRenderer()
    r.load(scene.copy(), 1024, 1024)
    draw = r.kernel_launches()[-1][1]            # the draw kernel, over the clear colour
    out["rand10k draw"] = {"cupy graph replay + cupy synchronize": host_us(Graph([draw]), device_synchronize),
                           "ctypes graph replay + ctypes synchronize": host_us(driver_graph([draw]), driver_sync)}
    frames = []
    for _ in range(3):
        r = FastCudaRenderer()
        r.load(scene.copy(), 1024, 1024)
        r.synchronize()
        t = run_frames(r, 0, 4)
        frames.append({p: [round(v * 1e3, 2) for v in getattr(t, p)] for p in ("clear", "advance", "render")})
    out["rand10k frames 0:4, us"] = frames
    print(json.dumps(out, indent=1))
    if a.output:
        with open(a.output, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
