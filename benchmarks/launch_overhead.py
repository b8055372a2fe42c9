"""Host cost of one launch + synchronize: CuPy's call vs a packed launch (renderer.cuda_module.Launch)."""
import time

import cupy as cp
import numpy as np

from renderer.cuda_module import Launch, device_synchronize

src = 'extern "C" __global__ void nop(float* p, int n) { if (threadIdx.x == 0 && n < 0) p[0] = 1.f; }'
f = cp.RawModule(code=src).get_function("nop")
a = cp.zeros(4, dtype=np.float32)
packed = Launch(f, (1,), (32,), (a, np.int32(4)))


def bench(label, fn, sync, reps=2000):
    for _ in range(100):
        fn(); sync()
    t = time.perf_counter()
    for _ in range(reps):
        fn(); sync()
    print(f"{label:<40} {(time.perf_counter() - t) / reps * 1e6:6.2f} us")


stream_sync = cp.cuda.get_current_stream().synchronize
bench("cupy call + stream.synchronize", lambda: f((1,), (32,), (a, np.int32(4))), stream_sync)
bench("cupy call + deviceSynchronize", lambda: f((1,), (32,), (a, np.int32(4))), device_synchronize)
bench("packed launch + deviceSynchronize", packed, device_synchronize)
bench("deviceSynchronize alone", lambda: None, device_synchronize)
