// The course's tiled design: one block per TILE_SIZE x TILE_SIZE tile, one thread per pixel.
// The block culls circles against its tile cooperatively, BLOCK_THREADS at a time (each
// thread tests one, a block scan compacts the hits into a shared list in circle order),
// then every thread blends the listed circles into its pixel, held in registers.
#include "shade.cuh"
#include "scan.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
render_tiled(const float4* __restrict__ circles, const float* __restrict__ colors, int n,
             float4* __restrict__ image, int width, int height, int snow) {
    __shared__ int list[BLOCK_THREADS];
    __shared__ int warp_sums[32];
    const int tx0 = blockIdx.x * TILE_SIZE, ty0 = blockIdx.y * TILE_SIZE;
    const int tx1 = min(tx0 + TILE_SIZE, width), ty1 = min(ty0 + TILE_SIZE, height);
    const int x = tx0 + threadIdx.x % TILE_SIZE, y = ty0 + threadIdx.x / TILE_SIZE;
    const bool inside = x < width && y < height;
    const float px = pixel_centre(x, width), py = pixel_centre(y, height);
    float4 pixel = inside ? image[y * width + x] : make_float4(0.f, 0.f, 0.f, 0.f);

    for (int base = 0; base < n; base += BLOCK_THREADS) {
        const int i = base + threadIdx.x;
        int hit = 0;
        if (i < n) {
            PixelBox b = circle_box(circles[i], width, height);
            hit = b.x0 < tx1 && b.x1 > tx0 && b.y0 < ty1 && b.y1 > ty0;
        }
        int count;
        const int slot = block_exclusive_scan<BLOCK_THREADS>(hit, count, warp_sums);
        if (hit) list[slot] = i;
        __syncthreads();
        if (inside) {
            for (int k = 0; k < count; ++k) {
                const int c = list[k];
                shade_pixel(pixel, circles[c], colors, c, px, py, snow);
            }
        }
        __syncthreads();   // the list is rewritten by the next chunk
    }
    if (inside) image[y * width + x] = pixel;
}
