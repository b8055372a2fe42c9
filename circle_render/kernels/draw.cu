// The fast renderer's draw stage ("draw"): one block per tile walks its supertile's list
// (kernels/bin.cu) or every circle (walk.cuh), or for deep flat scenes first the front layer's
// lists and then, from every circle, only the tiles that layer left unfinished. Compiled once
// per shading (SNOW_SCENE). NumPy twin: circle_render/twins/draw.py.
#include "walk.cuh"

// One tile: its supertile's list when binned and the lists are within capacity, otherwise every
// circle (supertiles are tiles_per_super tiles a side, a power of two: the supertile is two
// shifts). Returns whether the tile was deferred (defer: see walk_tile).
template <bool SNOW>
__device__ __forceinline__ bool draw_tile(
        int2 t, const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const uint2* __restrict__ list, const int* __restrict__ starts, int capacity,
        int tiles_per_super, int binned, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height, bool defer) {
    int begin = 0, end = n;
    bool listed = false;
    if (binned && starts[SUPERTILES] <= capacity) {      // the lists are whole
        const int shift = __ffs(tiles_per_super) - 1;
        const int s = (t.y >> shift) * SUPER_GRID + (t.x >> shift);
        begin = starts[s];
        end = starts[s + 1];
        listed = true;
    }
    if (listed)      // two instances: each path keeps only its own values in registers
        return walk_tile<SNOW, true>(t, circles, colors, list, begin, end, image, rows, cleared, width, height,
                                     defer);
    return walk_tile<SNOW, false>(t, circles, colors, list, begin, end, image, rows, cleared, width, height,
                                  defer);
}

// layer DRAW_ALL: one block per tile (tile_of_block). DRAW_FRONT: the circles given are the
// scene's last ones; a tile they leave unfinished is not drawn but listed in `deferred`.
// DRAW_BACK: a grid of a few blocks a SM takes the deferred tiles, from every circle; with none
// it returns at once, else the last block to finish zeroes the count and its own counter
// deferred[1] for the next frame. At least FAST_MIN_BLOCKS blocks an SM (64 registers).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast(const float4* __restrict__ circles,   // (n,) x, y, z, r
            const float* __restrict__ colors,     // (n, 3)
            int n,
            const uint2* __restrict__ list,       // (capacity,) (circle index, packed tile box), bin.cu
            const int* __restrict__ starts,       // (SUPERTILES + 1,) where each list starts; then all
            int capacity,                         // entries list holds (more: walk every circle)
            int tiles_per_super,                  // supertile side in tiles, a power of two
            int binned,                           // 1: walk the lists, 0: every circle
            float4* __restrict__ image,           // (height, width) RGBA
            const float4* __restrict__ rows,      // (height,) each row's clear colour
            int cleared,                          // 1: draw over rows, not over image
            int width, int height,
            int* __restrict__ deferred,           // (2 + tiles,) [open tiles, back blocks done, tile ids]
            int layer) {                          // DRAW_ALL, DRAW_FRONT or DRAW_BACK
    constexpr bool SNOW = SNOW_SCENE != 0;
    const bool back = layer == DRAW_BACK;
    const int count = back ? deferred[0] : 1;
    if (count == 0) return;
    // one call of draw_tile (each call inlines two walks: registers)
    for (int b = back ? (int)blockIdx.x : 0; b < count; b += gridDim.x) {
        int2 t;
        if (back) {
            const int k = deferred[2 + b];
            t = make_int2(k & 0xffff, k >> 16);
        } else {
            t = tile_of_block();
        }
        const bool unfinished = draw_tile<SNOW>(t, circles, colors, n, list, starts, capacity, tiles_per_super,
                                                binned, image, rows, cleared, width, height, layer == DRAW_FRONT);
        if (unfinished && threadIdx.x == 0) deferred[2 + atomicAdd(&deferred[0], 1)] = t.x | t.y << 16;
        if (!back) break;
    }
    if (back) {
        __syncthreads();                   // every thread has read the count
        if (threadIdx.x == 0 && atomicAdd(&deferred[1], 1) == (int)gridDim.x - 1) {
            deferred[0] = 0;
            deferred[1] = 0;
        }
    }
}
