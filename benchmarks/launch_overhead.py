"""Host cost of a launch: CuPy's call, a packed launch (renderer.cuda_module.Launch) and a CUDA
graph replay (renderer.cuda_module.Graph), for an empty kernel and for rand10k's draw; and the
course's per-frame phases of rand10k, frame by frame.

    PYTHONPATH=. python benchmarks/launch_overhead.py [-o launch.json]
"""
import argparse
import json
import statistics
import time

import cupy as cp
import numpy as np

from circle_render.timing.bench import current_commit
from circle_render.cuda.fast import FastCudaRenderer
from circle_render.cuda.module import Graph, Launch, device_synchronize
from circle_render.timing.frames import run_frames
from circle_render.gpu import gpu_name
from circle_render.scenes import make_scene

NOP = 'extern "C" __global__ void nop(float* p, int n) { if (threadIdx.x == 0 && n < 0) p[0] = 1.f; }'


def host_us(fn, sync, reps=300):
    """Median and min microseconds of fn() + sync(), each call after an idle device."""
    times = []
    for _ in range(reps):
        device_synchronize()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e6)
    return {"median_us": round(statistics.median(times), 2), "min_us": round(min(times), 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    f = cp.RawModule(code=NOP).get_function("nop")
    buf = cp.zeros(4, dtype=np.float32)
    packed = Launch(f, (1,), (32,), (buf, np.int32(4)))
    graph = Graph([packed])
    none = lambda: None     # noqa: E731
    out = {"gpu": gpu_name(), "commit": current_commit(), "empty kernel": {
        "cupy call, host only": host_us(lambda: f((1,), (32,), (buf, np.int32(4))), none),
        "packed launch, host only": host_us(packed, none),
        "graph replay, host only": host_us(graph, none),
        "cupy call + synchronize": host_us(lambda: f((1,), (32,), (buf, np.int32(4))), device_synchronize),
        "packed launch + synchronize": host_us(packed, device_synchronize),
        "graph replay + synchronize": host_us(graph, device_synchronize),
        "synchronize alone": host_us(none, device_synchronize)}}
    scene = make_scene("rand10k")
    r = FastCudaRenderer()
    r.load(scene.copy(), 1024, 1024)
    draw = r.kernel_launches()[-1][1]            # the draw kernel, over the clear colour
    out["rand10k draw"] = {"packed launch + synchronize": host_us(draw, device_synchronize),
                           "graph replay + synchronize": host_us(Graph([draw]), device_synchronize)}
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
