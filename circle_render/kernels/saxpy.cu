// out = a * x + y on float32, as four-float vectors (streaming loads and stores: every
// byte is touched once). x, y and out are 16-byte aligned; the last n % 4 elements are
// done one by one.
// SAXPY_THREADS comes from circle_render/constants.py (-D).

extern "C" __global__ void __launch_bounds__(SAXPY_THREADS)
saxpy_f32(long long n, float a, const float* __restrict__ x, const float* __restrict__ y,
          float* __restrict__ out) {
    const long long vectors = n / 4;
    const long long stride = static_cast<long long>(gridDim.x) * SAXPY_THREADS;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    const float4* y4 = reinterpret_cast<const float4*>(y);
    float4* o4 = reinterpret_cast<float4*>(out);
    for (long long i = static_cast<long long>(blockIdx.x) * SAXPY_THREADS + threadIdx.x; i < vectors;
         i += stride) {
        const float4 u = __ldcs(x4 + i), w = __ldcs(y4 + i);
        __stcs(o4 + i, make_float4(a * u.x + w.x, a * u.y + w.y, a * u.z + w.z, a * u.w + w.w));
    }
    const long long tail = vectors * 4 + static_cast<long long>(blockIdx.x) * SAXPY_THREADS + threadIdx.x;
    if (tail < n) out[tail] = a * x[tail] + y[tail];
}
