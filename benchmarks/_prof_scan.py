import sys, time; sys.path.insert(0, '.')
import cupy as cp, numpy as np
from renderer.primitives import exclusive_scan, saxpy
from renderer.primitives_cli import cub_scan
x = cp.asarray(np.random.default_rng(0).integers(0, 10, 10000, dtype=np.int32))
exclusive_scan(x); cp.cuda.Device().synchronize()
f = cp.ones(10000, cp.float32)
for label, fn in [("exclusive_scan", lambda: exclusive_scan(x)), ("cub", lambda: cub_scan(x)),
                  ("saxpy", lambda: saxpy(1.0, f, f, f)), ("empty", lambda: cp.empty(10000, np.int32))]:
    for rep in range(2):
        t0 = time.perf_counter()
        for _ in range(2000): fn()
        cp.cuda.Device().synchronize()
        print(label, round((time.perf_counter() - t0) / 2000 * 1e6, 2), "us")
