import sys, time; sys.path.insert(0, '.')
import cupy as cp, numpy as np
from renderer.cuda_module import load_module, launch, Launch, function_ptr
f = load_module("saxpy.cu").get_function("saxpy_f32")
x = cp.ones(16, cp.float32)
args = (np.int64(16), np.float32(1), x, x, x)
ptr = function_ptr(f)
L = Launch(f, (1,), (256,), args)
cases = [("rawkernel", lambda: f((1,), (256,), args)), ("launch_packed", lambda: launch(ptr, (1,), (256,), args)),
         ("Launch_replay", lambda: L()), ("Launch_build+call", lambda: Launch(f, (1,), (256,), args)())]
for label, fn in cases * 2:
    fn(); cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(3000): fn()
    t1 = time.perf_counter()
    cp.cuda.Device().synchronize()
    t2 = time.perf_counter()
    print(f"{label}: host {1e6*(t1-t0)/3000:.2f} us/call, with drain {1e6*(t2-t0)/3000:.2f}")
