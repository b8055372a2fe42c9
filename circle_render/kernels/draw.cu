// The binned path's draw stages (cuda/binned.py): one block per tile walks its supertile's list
// (kernels/bin.cu) with the tile walk (walk.cuh), or every circle when the lists were cut short
// (a capacity chosen too small). Compiled once per shading (SNOW_SCENE). NumPy twins:
// circle_render/twins/draw.py.
//
// One body, draw_listed_tile, behind three entry points, a stage each:
// - draw: every tile, from lists of every circle ("draw", BinnedPath);
// - draw_front: every tile, from lists of the scene's last circles only, the front layer of a deep
//   flat scene; a tile they leave unfinished is not drawn but listed in `deferred`
//   ("draw_front", LayeredPath);
// - draw_back: a few blocks an SM take the deferred tiles, from lists of every circle; with none
//   it returns at once, else the last block to finish zeroes the count and its own counter for
//   the next frame ("draw_back", LayeredPath).
// At least FAST_MIN_BLOCKS blocks an SM (64 registers).
#include "walk.cuh"

constexpr bool SNOW = SNOW_SCENE != 0;

// One tile from its supertile's list when the lists are within capacity, otherwise from every
// circle (supertiles are tiles_per_super tiles a side, a power of two: the supertile is two
// shifts); two instances of the walk, so that each keeps only its own values in registers.
// Returns whether the tile was deferred (DEFER: see walk_tile).
template <bool DEFER>
__device__ __forceinline__ bool draw_listed_tile(
        int2 t, const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const uint2* __restrict__ list, const int* __restrict__ starts, int capacity,
        int tiles_per_super, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height) {
    if (starts[SUPERTILES] <= capacity) {      // the lists are whole
        const int shift = __ffs(tiles_per_super) - 1;
        const int s = (t.y >> shift) * SUPER_GRID + (t.x >> shift);
        return walk_tile<SNOW, true>(t, circles, colors, list, starts[s], starts[s + 1], image, rows, cleared, width,
                                     height, DEFER);
    }
    return walk_tile<SNOW, false>(t, circles, colors, list, 0, n, image, rows, cleared, width, height, DEFER);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
draw(const float4* __restrict__ circles,   // (n,) x, y, z, r
     const float* __restrict__ colors,     // (n, 3)
     int n,
     const uint2* __restrict__ list,       // (capacity,) (circle index, packed tile box), bin.cu
     const int* __restrict__ starts,       // (SUPERTILES + 1,) where each list starts; then all
     int capacity,                         // entries list holds (more: walk every circle)
     int tiles_per_super,                  // supertile side in tiles, a power of two
     float4* __restrict__ image,           // (height, width) RGBA
     const float4* __restrict__ rows,      // (height,) each row's clear colour
     int cleared,                          // 1: draw over rows, not over image
     int width, int height) {
    draw_listed_tile<false>(tile_of_block(), circles, colors, n, list, starts, capacity, tiles_per_super, image, rows,
                            cleared, width, height);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
draw_front(const float4* __restrict__ circles,   // (n,) the front layer: the scene's last n circles
           const float* __restrict__ colors,     // (n, 3)
           int n,
           const uint2* __restrict__ list,       // (capacity,) the front layer's lists
           const int* __restrict__ starts,       // (SUPERTILES + 1,)
           int capacity, int tiles_per_super,
           float4* __restrict__ image,           // (height, width) RGBA
           const float4* __restrict__ rows,      // (height,)
           int cleared, int width, int height,
           int* __restrict__ deferred) {         // (2 + tiles,) [open tiles, back blocks done, tile ids]
    const int2 t = tile_of_block();
    const bool unfinished = draw_listed_tile<true>(t, circles, colors, n, list, starts, capacity, tiles_per_super,
                                                   image, rows, cleared, width, height);
    if (unfinished && threadIdx.x == 0) deferred[2 + atomicAdd(&deferred[0], 1)] = t.x | t.y << 16;
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
draw_back(const float4* __restrict__ circles,    // (n,) every circle
          const float* __restrict__ colors,      // (n, 3)
          int n,
          const uint2* __restrict__ list,        // (capacity,) the lists of every circle (bin_back)
          const int* __restrict__ starts,        // (SUPERTILES + 1,)
          int capacity, int tiles_per_super,
          float4* __restrict__ image,            // (height, width) RGBA
          const float4* __restrict__ rows,       // (height,)
          int cleared, int width, int height,
          int* __restrict__ deferred) {          // (2 + tiles,) draw_front's, zeroed here
    const int count = deferred[0];
    if (count == 0) return;
    for (int b = blockIdx.x; b < count; b += gridDim.x) {
        const int k = deferred[2 + b];
        draw_listed_tile<false>(make_int2(k & 0xffff, k >> 16), circles, colors, n, list, starts, capacity,
                                tiles_per_super, image, rows, cleared, width, height);
    }
    __syncthreads();                       // every thread has read the count
    if (threadIdx.x == 0 && atomicAdd(&deferred[1], 1) == (int)gridDim.x - 1) {
        deferred[0] = 0;
        deferred[1] = 0;
    }
}
