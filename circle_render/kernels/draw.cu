// The fast renderer's draw stage ("draw"): one block per tile walks its supertile's list
// (kernels/bin.cu) or every circle (walk.cuh), or for deep flat scenes first the front layer's
// lists and then, from every circle, only the tiles that layer left unfinished. NumPy twin:
// circle_render/twins/draw.py.
#include "walk.cuh"

// Which tile a block of the DRAW_BACK layer draws: block b takes deferred tile b, if there is
// one (deferred[0] tiles, ids from deferred[2]). The last block to leave zeroes the count and
// its own counter deferred[1] for the next frame; with no deferred tile nothing is touched.
__device__ __forceinline__ bool deferred_tile(int* __restrict__ deferred, int2& t) {
    const int count = deferred[0], b = blockIdx.y * gridDim.x + blockIdx.x;
    if (count == 0) return false;
    if (b < count) {
        const int k = deferred[2 + b];
        t = make_int2(k % gridDim.x, k / gridDim.x);
    }
    __syncthreads();                       // every thread has read the count
    if (threadIdx.x == 0 && atomicAdd(&deferred[1], 1) == (int)(gridDim.x * gridDim.y) - 1) {
        deferred[0] = 0;
        deferred[1] = 0;
    }
    return b < count;
}

// One block per tile. binned != 0 and lists within capacity: the tile walks its supertile's
// list, otherwise every circle. layer: DRAW_ALL; DRAW_FRONT, the circles given are the scene's
// last ones, and a tile they leave unfinished is listed in `deferred` instead of drawn;
// DRAW_BACK, only the deferred tiles, from every circle. At least FAST_MIN_BLOCKS blocks an SM
// (4: 64 registers).
template <bool SNOW>
__device__ __forceinline__ void render_fast_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,
        int tiles_per_super, int binned, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height,
        int* __restrict__ deferred, int layer) {
    PROFILE_START
    int2 t;
    if (layer == DRAW_BACK) {
        if (!deferred_tile(deferred, t)) return;
    } else {
        t = tile_of_block();
    }
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
    const bool defer = layer == DRAW_FRONT;
    bool unfinished;
    if (listed)      // two instances: each path keeps only its own values in registers
        unfinished = walk_tile<SNOW, true>(t, circles, colors, list, begin, end, image, rows, cleared, width,
                                           height, defer);
    else
        unfinished = walk_tile<SNOW, false>(t, circles, colors, list, begin, end, image, rows, cleared, width,
                                            height, defer);
    if (unfinished && threadIdx.x == 0) deferred[2 + atomicAdd(&deferred[0], 1)] = t.y * gridDim.x + t.x;
    PROFILE_END
}

#define RENDER_FAST_PARAMS                                                                     \
    const float4* __restrict__ circles, const float* __restrict__ colors, int n,              \
    const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,             \
    int tiles_per_super, int binned, float4* __restrict__ image,                              \
    const float4* __restrict__ rows, int cleared, int width, int height,                      \
    int* __restrict__ deferred, int layer
#define RENDER_FAST_ARGS circles, colors, n, list, totals, capacity, tiles_per_super, binned, \
    image, rows, cleared, width, height, deferred, layer

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast(RENDER_FAST_PARAMS) { render_fast_body<false>(RENDER_FAST_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast_snow(RENDER_FAST_PARAMS) { render_fast_body<true>(RENDER_FAST_ARGS); }
