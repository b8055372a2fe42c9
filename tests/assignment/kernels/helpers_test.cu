// Test kernels for circle_render/kernels/helpers.cuh (tests/assignment/test_assignment_gpu.py).
#include "helpers.cuh"

// boxes: float4 (left, right, bottom, top); out: bit 0 conservative, bit 1 exact
extern "C" __global__ void boxes(const float4* circles, const float4* boxes, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float4 c = circles[i], b = boxes[i];
    out[i] = (int)circle_in_box_conservative(c, b.x, b.y, b.z, b.w) | (int)circle_in_box(c, b.x, b.y, b.z, b.w) << 1;
}

// one block of 256 threads: each thread's exclusive prefix, and the total in out[256]
extern "C" __global__ void __launch_bounds__(256) scan256(const int* values, int* out) {
    __shared__ int warp_sums[32];
    int total;
    out[threadIdx.x] = block_exclusive_scan<256>(values[threadIdx.x], total, warp_sums);
    if (threadIdx.x == 0) out[256] = total;
}

// pixel k of width x height blends circles 0..n-1 in order (the reference's loop, one thread)
extern "C" __global__ void shade(const float4* circles, const float* colors, int n, float4* pixels, int width,
                                 int height, int snow) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= width * height) return;
    float4 p = pixels[k];
    const float px = pixel_centre(k % width, width), py = pixel_centre(k / width, height);
    for (int i = 0; i < n; ++i) shade_pixel(p, circles[i], colors, i, px, py, snow);
    pixels[k] = p;
}
