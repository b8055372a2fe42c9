"""The machine's ceilings, measured, for the floors of docs/floors.md: copy bandwidth, FP32
fused multiply-add rate, special-function (exp2, rsqrt) rate, global and shared atomic rates,
and what an empty kernel costs inside a graph. CUDA events, median of 10 after a warm-up.

    python -m benchmarks rates -o rates.json
"""
import argparse
import json

import numpy as np

from circle_render.gpu import gpu_name
from circle_render.timing.bench import current_commit
from circle_render.timing.timer import event_times

SRC = r'''
extern "C" __global__ void fma_chain(float* out, int iters) {       // 8 independent chains
    float a[8];
    for (int k = 0; k < 8; ++k) a[k] = threadIdx.x * 1e-3f + k;
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int k = 0; k < 8; ++k) a[k] = fmaf(a[k], 0.999f, 0.001f);
    float s = 0.f;
    for (int k = 0; k < 8; ++k) s += a[k];
    if (s == 12345.f) out[0] = s;
}
extern "C" __global__ void sfu_chain(float* out, int iters) {       // ex2 and rsqrt, 4 chains each
    float a[4], b[4];
    for (int k = 0; k < 4; ++k) { a[k] = threadIdx.x * 1e-6f + k * 0.1f; b[k] = 1.f + k; }
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int k = 0; k < 4; ++k) { a[k] = exp2f(-a[k]); b[k] = rsqrtf(b[k] + 1.f); }
    float s = 0.f;
    for (int k = 0; k < 4; ++k) s += a[k] + b[k];
    if (s == 12345.f) out[0] = s;
}
extern "C" __global__ void atomics(int* counters, int mask, int per_thread) {
    unsigned h = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u;
    for (int i = 0; i < per_thread; ++i) {
        h = h * 1664525u + 1013904223u;
        atomicAdd(&counters[(h >> 8) & mask], 1);
    }
}
extern "C" __global__ void shared_atomics(int* out, int per_thread) {
    __shared__ int bins[4096];
    for (int i = threadIdx.x; i < 4096; i += blockDim.x) bins[i] = 0;
    __syncthreads();
    unsigned h = (blockIdx.x * blockDim.x + threadIdx.x) * 2654435761u;
    for (int i = 0; i < per_thread; ++i) {
        h = h * 1664525u + 1013904223u;
        atomicAdd(&bins[(h >> 8) & 4095], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(out, bins[0]);
}
extern "C" __global__ void empty() {}
'''


def median_ms(step, runs=10):
    return event_times(step, runs, warmup=2, idle=False).median


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default="rates.json")
    a = ap.parse_args()
    import cupy as cp
    mod = cp.RawModule(code=SRC, options=("--std=c++17",))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    out = {"gpu": gpu_name(), "commit": current_commit(), "sms": sms}
    n = 1 << 28                                                        # 1 GiB of float32
    src, dst = cp.ones(n, np.float32), cp.empty(n, np.float32)
    ms = median_ms(lambda: dst.__setitem__(slice(None), src))
    out["copy_GBps"] = 2 * 4 * n / ms / 1e6                           # read + write
    buf = cp.zeros(1, np.float32)
    blocks, threads, iters = sms * 16, 256, 4096
    ms = median_ms(lambda: mod.get_function("fma_chain")((blocks,), (threads,), (buf, np.int32(iters))))
    out["fma_TFLOPs"] = 2 * 8 * iters * blocks * threads / ms / 1e9      # 2 flops an FMA
    ms = median_ms(lambda: mod.get_function("sfu_chain")((blocks,), (threads,), (buf, np.int32(iters // 4))))
    out["sfu_Gops"] = 8 * (iters // 4) * blocks * threads / ms / 1e6    # ex2 + rsqrt, 4 chains each
    counters = cp.zeros(1 << 22, np.int32)
    per = 64
    for label, mask in (("atomic_distinct_Gops", (1 << 22) - 1), ("atomic_4096_Gops", 4095)):
        ms = median_ms(lambda mask=mask: mod.get_function("atomics")((sms * 8,), (256,),
                                                                     (counters, np.int32(mask), np.int32(per))))
        out[label] = sms * 8 * 256 * per / ms / 1e6
    ms = median_ms(lambda: mod.get_function("shared_atomics")((sms * 8,), (256,), (counters, np.int32(per * 8))))
    out["shared_atomic_Gops"] = sms * 8 * 256 * per * 8 / ms / 1e6
    # an empty kernel inside a graph: the GPU time a launch of a captured frame costs
    capture = cp.cuda.Stream(non_blocking=True)
    with capture:
        capture.begin_capture()
        for _ in range(20):
            mod.get_function("empty")((1,), (32,), ())
        graph = capture.end_capture()
    graph.upload()
    out["graph_kernel_us"] = median_ms(lambda: graph.launch()) * 1e3 / 20
    print(json.dumps(out, indent=1))
    with open(a.output, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
