// Rungs of the handout's ladder of hints (docs/assignment.md), timed by
// benchmarks/assignment_kit.py; not renderers of the command line.
// render_pixel_loop: one thread per pixel, every circle in index order: right, and slow
// (every pixel looks at every circle). render_pixel_loop_reversed: the same loop from the last
// circle to the first, to show what breaking the order alone looks like (no races: each pixel
// has one thread). NumPy twins: twin.py beside this file. Compiled by path with the project's
// constants (benchmarks/ladder/__init__.py), helpers.cuh from circle_render/kernels/.
#include "helpers.cuh"

template <bool REVERSED>
__device__ __forceinline__ void pixel_loop(const float4* __restrict__ circles, const float* __restrict__ colors,
                                           int n, float4* __restrict__ image, int width, int height, int snow) {
    const int x = blockIdx.x * TILE_SIZE + threadIdx.x % TILE_SIZE;
    const int y = blockIdx.y * TILE_SIZE + threadIdx.x / TILE_SIZE;
    if (x >= width || y >= height) return;
    const float px = pixel_centre(x, width), py = pixel_centre(y, height);
    float4 p = image[y * width + x];
    for (int k = 0; k < n; ++k) {
        const int i = REVERSED ? n - 1 - k : k;
        shade_pixel(p, circles[i], colors, i, px, py, snow);
    }
    image[y * width + x] = p;
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
render_pixel_loop(const float4* __restrict__ circles, const float* __restrict__ colors, int n,
                  float4* __restrict__ image, int width, int height, int snow) {
    pixel_loop<false>(circles, colors, n, image, width, height, snow);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
render_pixel_loop_reversed(const float4* __restrict__ circles, const float* __restrict__ colors, int n,
                           float4* __restrict__ image, int width, int height, int snow) {
    pixel_loop<true>(circles, colors, n, image, width, height, snow);
}
