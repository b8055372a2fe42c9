// The fast renderer's draw stage ("draw"): one block per tile walks its supertile's list
// (kernels/bin.cu) or every circle (walk.cuh). NumPy twin: circle_render/twins/draw.py.
#include "walk.cuh"

// One block per tile. binned != 0 and lists within capacity: the tile walks its supertile's
// list, otherwise every circle. At least FAST_MIN_BLOCKS blocks an SM (4: 64 registers).
template <bool SNOW>
__device__ __forceinline__ void render_fast_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,
        int tiles_per_super, int binned, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height) {
    PROFILE_START
    const int2 t = tile_of_block();
    int begin = 0, end = n;
    bool listed = false;
    if (binned) {          // one pass over the list lengths: this list's start and the total
        const int s = (t.y / tiles_per_super) * SUPER_GRID + t.x / tiles_per_super;
        int start = 0, total = 0;
        for (int k = 0; k < SUPERTILES; ++k) {
            start += k < s ? totals[k] : 0;
            total += totals[k];
        }
        if (total <= capacity) {
            begin = start;
            end = start + totals[s];
            listed = true;
        }
    }
    if (listed)      // two instances: each path keeps only its own values in registers
        walk_tile<SNOW, true>(t, circles, colors, list, begin, end, image, rows, cleared, width, height);
    else
        walk_tile<SNOW, false>(t, circles, colors, list, begin, end, image, rows, cleared, width, height);
    PROFILE_END
}

#define RENDER_FAST_PARAMS                                                                     \
    const float4* __restrict__ circles, const float* __restrict__ colors, int n,              \
    const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,             \
    int tiles_per_super, int binned, float4* __restrict__ image,                              \
    const float4* __restrict__ rows, int cleared, int width, int height
#define RENDER_FAST_ARGS circles, colors, n, list, totals, capacity, tiles_per_super, binned, \
    image, rows, cleared, width, height

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast(RENDER_FAST_PARAMS) { render_fast_body<false>(RENDER_FAST_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast_snow(RENDER_FAST_PARAMS) { render_fast_body<true>(RENDER_FAST_ARGS); }
