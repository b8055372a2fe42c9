// The cull of the tile walk (walk.cuh): each step, a block tests the next STEP entries against
// its tile and stages the hits in shared memory, in circle order, with each warp's ballots.
#pragma once
#include "scan.cuh"
#include "tiles.cuh"

// A step culls STEP = CULL_ITEMS * BLOCK_THREADS entries: thread t's item m is entry
// k = top - 1 - (m * BLOCK_THREADS + t) (coalesced), so place m * BLOCK_THREADS + t in circle
// order from the last one down. Each hit is staged in shared memory at its own place, and
// each warp's ballot of item m says which of its 32 places hold one. After one barrier every
// warp scans those ballots itself and finds the j-th hit's place by a binary search: no
// compaction pass, no second barrier (hit_place).
constexpr int STEP = CULL_ITEMS * BLOCK_THREADS;
constexpr int WARPS = BLOCK_THREADS / 32;
static_assert(1 <= CULL_ITEMS && CULL_ITEMS * WARPS <= 32, "one lane of a warp per ballot word");

// What the cull needs of entry k: the list entry (index, packed box) as bits in x and y, or
// the circle itself.
template <bool LISTED>
__device__ __forceinline__ float4 fetch_entry(const uint2* __restrict__ list,
                                              const float4* __restrict__ circles, int k) {
    if (!LISTED) return circles[k];
    const uint2 e = list[k];
    return make_float4(__uint_as_float(e.x), __uint_as_float(e.y), 0.f, 0.f);
}

// The staged hits of one step, by place: circles as (x, y, r^2, r); flat: colours times alpha
// (r, g, b, 0), snow: (largest alpha, from the depth; 1 / r, 0, 0); and hits[m * WARPS + w]:
// warp w's ballot of item m. Flat: partial[w] holds warp w's partial hits of its current 32,
// in order: the circle, its colour and the run of full hits just before it (colour, T), so
// that the loop over them reads shared memory at a running index (no shuffles, no bit scan).
// The rectangles are read from shared memory where needed: held in registers through the walk
// they cost eight (the draw spilled with CULL_ITEMS 4).
template <bool SNOW>
struct Stage {
    float4 circle[STEP];
    float4 color[STEP];
    unsigned hits[CULL_ITEMS * WARPS];
    float4 partial[SNOW ? 1 : WARPS][3][32];
    float4 rect[WARPS][2];    // warp w's: its sub-tile's pixel centres, the tile's (x0, x1, y0, y1)
    float4 ramp[SNOW ? SNOW_RAMP_LAST + 2 : 1];   // snow's colour ramp, its last entry twice
};
enum { PARTIAL_CIRCLE, PARTIAL_COLOR, PARTIAL_RUN };

// Culls the step's entries against the tile (listed: the packed box holds the tile; not
// listed: the circle reaches the tile's rectangle of pixel centres) and stages the hits.
template <bool SNOW, bool LISTED>
__device__ __forceinline__ void cull_step(
        Stage<SNOW>& stage, const uint2* __restrict__ list,
        const float4* __restrict__ circles, const float* __restrict__ colors, int top, int begin,
        unsigned tile, float4 rect) {
    float4 v[CULL_ITEMS];
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        if (k >= begin) v[m] = fetch_entry<LISTED>(list, circles, k);
    }
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        const bool hit = k >= begin && (LISTED ? box_has_tile(__float_as_uint(v[m].y), tile)
                                               : reaches(v[m], rect.x, rect.y, rect.z, rect.w));
        const unsigned ballot = __ballot_sync(FULL, hit);
        if ((threadIdx.x & 31) == 0) stage.hits[m * WARPS + (threadIdx.x >> 5)] = ballot;
        if (hit) {
            const int i = LISTED ? (int)__float_as_uint(v[m].x) : k;
            const float4 c = LISTED ? circles[i] : v[m];
            const int place = m * BLOCK_THREADS + (int)threadIdx.x;
            stage.circle[place] = make_float4(c.x, c.y, c.w * c.w, c.w);
            if (SNOW) {
                const float max_alpha = SNOW_MAX_ALPHA * fminf(fmaxf(SNOW_ALPHA_BASE + SNOW_ALPHA_DEPTH * (1.f - c.z),
                                                                     0.f), 1.f);
                stage.color[place] = make_float4(max_alpha, 1.f / c.w, 0.f, 0.f);
            } else {
                stage.color[place] = make_float4(FLAT_ALPHA * colors[3 * i], FLAT_ALPHA * colors[3 * i + 1],
                                                 FLAT_ALPHA * colors[3 * i + 2], 0.f);
            }
        }
    }
}

// The block's one stage, whichever walk_tile instance uses it.
template <bool SNOW>
__device__ __forceinline__ Stage<SNOW>& stage_memory() {
    __shared__ Stage<SNOW> stage;
    return stage;
}

// The staged hits in order, as every warp sees them: lane g holds ballot word g and `incl`,
// the hits in words 0..g.
struct StagedHits { unsigned word; int incl; };

__device__ __forceinline__ StagedHits staged_hits(const unsigned* hits) {
    const int lane = threadIdx.x & 31;
    StagedHits h;
    h.word = lane < CULL_ITEMS * WARPS ? hits[lane] : 0u;
    h.incl = warp_inclusive_scan(__popc(h.word));
    return h;
}

// Where ballot word g's 32 places start: word g is warp g % WARPS's ballot of item g / WARPS.
__device__ __forceinline__ int word_base(int g) {
    return g / WARPS * BLOCK_THREADS + g % WARPS * 32;
}

// The place of hit j (j < the hit count; every lane of the warp calls it, each with its j):
// the word holding it by binary search over `incl`, then its bit within the word.
__device__ __forceinline__ int hit_place(StagedHits h, int j) {
    int g = 0;
#pragma unroll
    for (int s = 16; s; s >>= 1)
        if (__shfl_sync(FULL, h.incl, g + s - 1) <= j) g += s;
    unsigned word = __shfl_sync(FULL, h.word, g);
    // its bit: words hold a hit or two a step, so dropping the lower ones beats __fns
    for (int r = j - (__shfl_sync(FULL, h.incl, g) - __popc(word)); r > 0; --r) word &= word - 1u;
    return word_base(g) + __ffs(word) - 1;
}
