// The fast renderer's sparse path, stages "sparse_bin" (tile_count, tile_scan, tile_emit) and
// "sparse_draw" (render_sparse): scenes with few circles over any pixel (micro2M).
// NumPy twins: circle_render/twins/sparse.py.
//
// Every pixel's circles fit a short list, so order is restored per pixel instead of per list:
// 1. tile_count: each circle adds 1 to the count of every tile its box touches (atomics).
// 2. tile_scan: counts -> where each tile's list starts, and a cursor for tile_emit; zeroes
//    the counts for the next frame.
// 3. tile_emit: each circle writes its index into every list it belongs to, in no order.
// 4. render_sparse, one block per tile, one pixel per thread: each thread takes list entries,
//    finds the tile's pixels the circle covers and appends the index to those pixels' lists in
//    shared memory; each pixel then sorts its list and blends it in circle order, exactly as
//    the serial reference does. A tile whose pixel lists overflow (or whose lists were cut
//    off at capacity) walks every circle instead, as render_fast does.

#include "walk.cuh"

template <class Visit>
__device__ __forceinline__ void for_each_tile(unsigned box, int tiles_x, Visit visit) {
    const int x0 = box & 0xffu, x1 = box >> 8 & 0xffu, y0 = box >> 16 & 0xffu, y1 = box >> 24;
    for (int ty = y0; ty <= y1; ++ty)
        for (int tx = x0; tx <= x1; ++tx) visit(ty * tiles_x + tx);
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
tile_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_x,
           int* __restrict__ counts) {
    for (int i = blockIdx.x * BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * BIN_THREADS)
        for_each_tile(pack_tile_box(circles[i], width, height), tiles_x,
                      [&](int t) { atomicAdd(&counts[t], 1); });
}

// One block. starts[t] = cursors[t] = counts before tile t; starts[tiles] = all of them.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
tile_scan(int* __restrict__ counts, int tiles, int* __restrict__ starts, int* __restrict__ cursors) {
    __shared__ int warp_sums[32];
    const int carry = block_exclusive_scan_n<SCAN_BLOCK>(tiles, [&](int i) { return counts[i]; },
        [&](int i, int before) {
            starts[i] = cursors[i] = before;
            counts[i] = 0;
        }, warp_sums);
    if (threadIdx.x == 0) starts[tiles] = carry;
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
tile_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_x,
          int* __restrict__ cursors, int* __restrict__ list, int capacity) {
    for (int i = blockIdx.x * BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * BIN_THREADS)
        for_each_tile(pack_tile_box(circles[i], width, height), tiles_x, [&](int t) {
            const int pos = atomicAdd(&cursors[t], 1);
            if (pos < capacity) list[pos] = i;
        });
}

#if FAST_TILE * FAST_TILE == BLOCK_THREADS     // one pixel per thread
template <bool SNOW>
__device__ __forceinline__ void render_sparse_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const int* __restrict__ list, const int* __restrict__ starts,
        const int* __restrict__ cursors, int capacity, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height) {
    PROFILE_START
    __shared__ int pixel_count[BLOCK_THREADS];
    __shared__ int pixel_list[SPARSE_SLOTS][BLOCK_THREADS];   // [slot][pixel]: no bank conflicts
    static_assert(sizeof(Stage<SNOW>) + sizeof(pixel_list) + sizeof(pixel_count) <= 48 * 1024,
                  "render_sparse's lists and walk_tile's stage fit 48 KB of shared memory: fewer "
                  "CULL_ITEMS or SPARSE_SLOTS");
    const int2 t = tile_of_block();
    const int tiles = gridDim.x * gridDim.y, tile = t.y * gridDim.x + t.x;
    const int x0 = t.x * FAST_TILE, y0 = t.y * FAST_TILE;
    pixel_count[threadIdx.x] = 0;
    __syncthreads();
    const bool cut = starts[tiles] > capacity;
    const int begin = starts[tile], end = cut ? begin : cursors[tile];
    for (int k = begin + (int)threadIdx.x; k < end; k += BLOCK_THREADS) {
        const int i = list[k];
        const float4 c = circles[i];
        const PixelBox b = circle_box(c, width, height);
        const float r2 = c.w * c.w;
        for (int y = max(b.y0, y0); y < min(b.y1, y0 + FAST_TILE); ++y) {
            const float py = pixel_centre(y, height);
            for (int x = max(b.x0, x0); x < min(b.x1, x0 + FAST_TILE); ++x) {
                if (dist2(c, pixel_centre(x, width), py) <= r2) {
                    const int p = (y - y0) * FAST_TILE + (x - x0);
                    const int slot = atomicAdd(&pixel_count[p], 1);
                    if (slot < SPARSE_SLOTS) pixel_list[slot][p] = i;
                }
            }
        }
    }
    __syncthreads();
    const int m = pixel_count[threadIdx.x];
    if (__syncthreads_or(cut || m > SPARSE_SLOTS)) {
        walk_tile<SNOW, false>(t, circles, colors, nullptr, 0, n, image, rows, cleared, width, height);
    } else {
        for (int a = 1; a < m; ++a) {            // insertion sort: circle order
            const int v = pixel_list[a][threadIdx.x];
            int j = a - 1;
            for (; j >= 0 && pixel_list[j][threadIdx.x] > v; --j)
                pixel_list[j + 1][threadIdx.x] = pixel_list[j][threadIdx.x];
            pixel_list[j + 1][threadIdx.x] = v;
        }
        const int x = x0 + threadIdx.x % FAST_TILE, y = y0 + threadIdx.x / FAST_TILE;
        if (x < width && y < height) {
            float4 p = cleared ? rows[y] : image[y * width + x];
            const float px = pixel_centre(x, width), py = pixel_centre(y, height);
            for (int j = 0; j < m; ++j) {
                const int i = pixel_list[j][threadIdx.x];
                shade_pixel(p, circles[i], colors, i, px, py, SNOW);
            }
            image[y * width + x] = p;
        }
    }
    PROFILE_END
}

#define RENDER_SPARSE_PARAMS                                                                   \
    const float4* __restrict__ circles, const float* __restrict__ colors, int n,              \
    const int* __restrict__ list, const int* __restrict__ starts,                             \
    const int* __restrict__ cursors, int capacity, float4* __restrict__ image,                \
    const float4* __restrict__ rows, int cleared, int width, int height
#define RENDER_SPARSE_ARGS circles, colors, n, list, starts, cursors, capacity, image, rows, \
    cleared, width, height

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
render_sparse(RENDER_SPARSE_PARAMS) { render_sparse_body<false>(RENDER_SPARSE_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
render_sparse_snow(RENDER_SPARSE_PARAMS) { render_sparse_body<true>(RENDER_SPARSE_ARGS); }
#endif
