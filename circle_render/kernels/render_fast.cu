// The fast renderer. Per frame:
//
// 1. Binning (scenes with many circles): every circle is listed under each supertile (one of
//    SUPER_GRID x SUPER_GRID) its pixel box touches, in circle order, as an "entry": its index
//    and its box in tiles packed into 32 bits. bin_count counts per (chunk of circles,
//    supertile), bin_scan scans each supertile's row of counts, bin_emit writes. Each warp
//    ranks its 32 circles with ballots, so the lists come out ordered without a sort.
// 2. render_fast, one block per tile (FAST_TILE x FAST_TILE pixels, PIXELS per thread): walk
//    the supertile's list (or every circle) from the LAST circle to the first, cull
//    CULL_ITEMS * BLOCK_THREADS circles per step (hits staged in shared memory: cull_step),
//    composite the hits front to back with transmittance T, each warp its own sub-tile
//    (runs of hits that cover it all folded first: fold_runs), and stop once every pixel of
//    the tile has T < T_EPS. Two barriers a step. "Over" is
//    associative, so this equals serial blending up to rounding and the at most
//    T_EPS * max colour that the circles behind a finished pixel would have added.
// 3. Sparse scenes (few circles over any pixel) bin per tile and draw per pixel instead: see
//    "the sparse path" below.
#include "shade.cuh"
#include "scan.cuh"

constexpr int SUPERTILES = SUPER_GRID * SUPER_GRID;
constexpr int BIN_WARPS = BIN_THREADS / 32;
constexpr int LANE_SLOTS = (SUPERTILES + 31) / 32;   // per-supertile counters each lane holds
constexpr int PIXELS = FAST_TILE * FAST_TILE / BLOCK_THREADS;
// Each warp shades a SUB_W x SUB_H sub-tile: lane l takes column l % SUB_W and rows
// l / SUB_W + 2p (p < PIXELS), so a thread's pixels share their column and a warp's are compact.
constexpr int SUB_W = 16, SUB_H = 2 * PIXELS;
static_assert(FAST_TILE % SUB_W == 0 && FAST_TILE % SUB_H == 0, "tiles split into sub-tiles");
constexpr unsigned FULL = 0xffffffffu;
constexpr unsigned NO_TILES = 0x000000ffu;           // x0 = 255 > x1 = 0: touches no tile
static_assert(FAST_TILE * FAST_TILE % BLOCK_THREADS == 0, "a tile is whole pixels per thread");

#ifdef PROFILE_BLOCKS
// Diagnostics only (benchmarks/block_profile.py compiles with -DPROFILE_BLOCKS=<blocks>): per
// block its start and end on the global timer (ns), SM, cull steps and hits blended.
__device__ unsigned long long block_profile[PROFILE_BLOCKS][4];
__shared__ int profile_steps, profile_hits;   // kept by thread 0: steps, hits its warp blended
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void profile_block(unsigned long long start) {
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        unsigned long long* rec = block_profile[blockIdx.y * gridDim.x + blockIdx.x];
        rec[0] = start;
        rec[1] = global_ns();
        rec[2] = (unsigned long long)smid << 32 | (unsigned)profile_steps;
        rec[3] = (unsigned)profile_hits;
    }
}
#define PROFILE_START                                                                          \
    const unsigned long long profile_start = global_ns();                                     \
    if (threadIdx.x == 0) profile_steps = profile_hits = 0;
#define PROFILE_STEP if (threadIdx.x == 0) ++profile_steps;
#define PROFILE_STEP_HIT if (threadIdx.x == 0) ++profile_hits;
#define PROFILE_END profile_block(profile_start);
#else
#define PROFILE_START
#define PROFILE_STEP
#define PROFILE_STEP_HIT
#define PROFILE_END
#endif

// ---- packed tile boxes: bytes (x0, x1, y0, y1), inclusive tile indices, so images of up to
// ---- 256 tiles a side. A circle whose pixel box is empty covers no pixel: NO_TILES.

__device__ __forceinline__ unsigned pack_tile_box(float4 c, int width, int height) {
    const PixelBox b = circle_box(c, width, height);
    if (b.x0 >= b.x1 || b.y0 >= b.y1) return NO_TILES;
    return (unsigned)(b.x0 / FAST_TILE) | (unsigned)((b.x1 - 1) / FAST_TILE) << 8 |
           (unsigned)(b.y0 / FAST_TILE) << 16 | (unsigned)((b.y1 - 1) / FAST_TILE) << 24;
}

// tile = (tx, tx, ty, ty) in bytes. Per byte: tx >= x0, x1 >= tx, ty >= y0, y1 >= ty.
__device__ __forceinline__ bool box_has_tile(unsigned box, unsigned tile) {
    return __vcmpgeu4(__byte_perm(tile, box, 0x7250), __byte_perm(tile, box, 0x3614)) == FULL;
}

// ---- binning ----

// Inclusive supertile range of a packed tile box (x0 > x1 when it touches no tile).
struct SuperRange { int x0, x1, y0, y1; };

__device__ __forceinline__ SuperRange super_range(unsigned box, int tiles_per_super) {
    return {(int)(box & 0xffu) / tiles_per_super, (int)(box >> 8 & 0xffu) / tiles_per_super,
            (int)(box >> 16 & 0xffu) / tiles_per_super, (int)(box >> 24) / tiles_per_super};
}

// Walks a warp's `items` groups of 32 circles from `first`, loading the next group while the
// current one is binned; calls visit(entry, range) with the lane's circle of each group.
template <class Visit>
__device__ __forceinline__ void for_each_circle_group(const float4* __restrict__ circles, int n,
                                                      int first, int items, int width, int height,
                                                      int tiles_per_super, Visit visit) {
    const int lane = threadIdx.x & 31;
    float4 next = first + lane < n ? circles[first + lane] : make_float4(0.f, 0.f, 0.f, 0.f);
    for (int it = 0; it < items && first + it * 32 < n; ++it) {
        const int i = first + it * 32 + lane;
        const float4 c = next;
        if (it + 1 < items && i + 32 < n) next = circles[i + 32];
        const unsigned box = i < n ? pack_tile_box(c, width, height) : NO_TILES;
        visit(make_uint2((unsigned)i, box), super_range(box, tiles_per_super));
    }
}

// For each supertile s touched by any of the warp's 32 circles, in increasing s, call
// visit(s, hits), where bit l of hits says whether lane l's circle touches s.
template <class Visit>
__device__ __forceinline__ void for_each_supertile(SuperRange r, Visit visit) {
#pragma unroll
    for (int sy = 0; sy < SUPER_GRID; ++sy) {
        const bool row = r.y0 <= sy && sy <= r.y1;
        if (!__any_sync(FULL, row)) continue;
#pragma unroll
        for (int sx = 0; sx < SUPER_GRID; ++sx) {
            const unsigned hits = __ballot_sync(FULL, row && r.x0 <= sx && sx <= r.x1);
            if (hits) visit(sy * SUPER_GRID + sx, hits);
        }
    }
}

// Block b handles circles [b * chunk, (b + 1) * chunk), chunk = BIN_THREADS * items, each warp
// 32 * items of them. Writes counts[s * chunks + b] (circles of the chunk touching s) and, for
// bin_emit, warp_offsets[(b * BIN_WARPS + w) * SUPERTILES + s] (those before warp w).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super,
          int items, int* __restrict__ counts, int* __restrict__ warp_offsets, int chunks) {
    __shared__ int per_warp[BIN_WARPS][SUPERTILES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    int held[LANE_SLOTS] = {};
    for_each_circle_group(circles, n, first, items, width, height, tiles_per_super,
                          [&](uint2, SuperRange r) {
        for_each_supertile(r, [&](int s, unsigned hits) {
            if ((s & 31) == lane) held[s >> 5] += __popc(hits);
        });
    });
#pragma unroll
    for (int k = 0; k < LANE_SLOTS; ++k)
        if (k * 32 + lane < SUPERTILES) per_warp[warp][k * 32 + lane] = held[k];
    __syncthreads();
    for (int s = threadIdx.x; s < SUPERTILES; s += BIN_THREADS) {
        int sum = 0;
        for (int w = 0; w < BIN_WARPS; ++w) {
            warp_offsets[(blockIdx.x * BIN_WARPS + w) * SUPERTILES + s] = sum;
            sum += per_warp[w][s];
        }
        counts[s * chunks + blockIdx.x] = sum;
    }
}

// Block s: row s of counts (one count per chunk) becomes its exclusive prefix sum and
// totals[s] the row's sum, the length of supertile s's list.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
bin_scan(int* __restrict__ counts, int chunks, int* __restrict__ totals) {
    __shared__ int warp_sums[32];
    int* row = counts + blockIdx.x * chunks;
    const int carry = block_exclusive_scan_n<SCAN_BLOCK>(
        chunks, [&](int i) { return row[i]; }, [&](int i, int before) { row[i] = before; }, warp_sums);
    if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

// Where supertile s's list starts: the lengths of the lists before it (all lists, end to end).
__device__ __forceinline__ int list_start(const int* __restrict__ totals, int s) {
    int start = 0;
    for (int k = 0; k < s; ++k) start += totals[k];
    return start;
}

// Same walk as bin_count; each entry is written at its ordered place in every list it belongs
// to. Writes past capacity are dropped (render_fast then walks every circle instead).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super,
         int items, const int* __restrict__ row_offsets, const int* __restrict__ totals,
         const int* __restrict__ warp_offsets, int chunks, uint2* __restrict__ list, int capacity) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    const unsigned lower = (1u << lane) - 1u;
    int next[LANE_SLOTS];   // lane l: where this warp's next entry for supertile 32k + l goes
#pragma unroll
    for (int k = 0; k < LANE_SLOTS; ++k) {
        const int s = k * 32 + lane;
        next[k] = s < SUPERTILES ? list_start(totals, s) + row_offsets[s * chunks + blockIdx.x] +
                                   warp_offsets[(blockIdx.x * BIN_WARPS + warp) * SUPERTILES + s] : 0;
    }
    for_each_circle_group(circles, n, first, items, width, height, tiles_per_super,
                          [&](uint2 e, SuperRange r) {
        for_each_supertile(r, [&](int s, unsigned hits) {
            const int base = __shfl_sync(FULL, next[s >> 5], s & 31);
            if (hits >> lane & 1u) {
                const int pos = base + __popc(hits & lower);
                if (pos < capacity) list[pos] = e;
            }
            if ((s & 31) == lane) next[s >> 5] = base + __popc(hits);
        });
    });
}

// ---- per-tile walk ----

// Which tile block b draws. TILE_ORDER 1 starts the image's border ring first, 2 goes ring by
// ring from the border in: coverage thins out towards the border, so that is where walks are
// longest (benchmarks/block_profile.py), and a long walk that starts in the last wave sets
// the kernel's time. Within a ring: top row, bottom row, left column, right column.
__device__ __forceinline__ int2 tile_of_block() {
    const int gx = gridDim.x, gy = gridDim.y;
    int b = blockIdx.y * gx + blockIdx.x;
    if (TILE_ORDER == 0) return make_int2(b % gx, b / gx);
    int r = 0, w = gx, h = gy;          // ring r: the border of a w x h grid at (r, r)
    for (; TILE_ORDER == 2 && w > 2 && h > 2 && b >= 2 * (w + h) - 4; ++r, w -= 2, h -= 2)
        b -= 2 * (w + h) - 4;
    if (w <= 2 || h <= 2) return make_int2(r + b % w, r + b / w);
    if (b < w) return make_int2(r + b, r);
    if ((b -= w) < w) return make_int2(r + b, r + h - 1);
    if ((b -= w) < h - 2) return make_int2(r, r + 1 + b);
    if ((b -= h - 2) < h - 2) return make_int2(r + w - 1, r + 1 + b);
    b -= h - 2;
    return make_int2(r + 1 + b % (w - 2), r + 1 + b / (w - 2));
}

// Does a circle reach the rectangle [x0, x1] x [y0, y1] of pixel centres? The distance from
// its centre to the rectangle against its radius, with a margin for rounding: never false for
// a circle that covers one of those pixels (tighter than its box; a few extra are harmless).
__device__ __forceinline__ bool reaches(float4 c, float x0, float x1, float y0, float y1) {
    const float dx = fmaxf(fmaxf(x0 - c.x, c.x - x1), 0.f);
    const float dy = fmaxf(fmaxf(y0 - c.y, c.y - y1), 0.f);
    return dx * dx + dy * dy <= c.w * c.w * 1.0001f;
}

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

// The staged hits of one step, by place: circles (snow: as they are; flat: (x, y, r^2, r)),
// flat colours times alpha .5, and hits[m * WARPS + w]: warp w's ballot of item m.
template <bool SNOW>
struct Stage {
    float4 circle[STEP];
    float4 color[SNOW ? 1 : STEP];
    unsigned hits[CULL_ITEMS * WARPS];
};

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
            if (SNOW) {
                stage.circle[place] = c;
            } else {
                stage.circle[place] = make_float4(c.x, c.y, c.w * c.w, c.w);
                stage.color[place] = make_float4(.5f * colors[3 * i], .5f * colors[3 * i + 1],
                                                 .5f * colors[3 * i + 2], 0.f);
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

// Does a circle cover every pixel centre of [x0, x1] x [y0, y1] by the reference's test?
// The rounded distance grows with |dx| and |dy| (each rounding is monotonic), so a pixel's is
// at most the farthest corner's: testing the four corners is exact, not an estimate.
__device__ __forceinline__ bool covers_rect(float4 c, float x0, float x1, float y0, float y1) {
    const float dx0 = __fsub_rn(c.x, x0), dx1 = __fsub_rn(c.x, x1);
    const float dy0 = __fsub_rn(c.y, y0), dy1 = __fsub_rn(c.y, y1);
    const float dxx = fmaxf(__fmul_rn(dx0, dx0), __fmul_rn(dx1, dx1));
    const float dyy = fmaxf(__fmul_rn(dy0, dy0), __fmul_rn(dy1, dy1));
    return __fadd_rn(dxx, dyy) <= c.z;           // c.z: r^2 as the pixel test rounds it
}

// Runs of hits that cover a warp's whole sub-tile, folded across the warp's 32 hits: lane l
// holds the run of full hits since the last partial hit before it (its colours composited
// over transmittance 1, alpha .5 each) and T, what that run lets through (a power of two).
struct Run { float3 color; float T; };

__device__ __forceinline__ Run fold_runs(unsigned full_mask, unsigned partial_mask, bool full,
                                         float4 col) {
    const int lane = threadIdx.x & 31;
    const unsigned before = (1u << lane) - 1u;
    const unsigned partial_before = partial_mask & before;
    const int start = partial_before ? 32 - __clz(partial_before) : 0;   // this lane's run starts
    const int rank = __popc(full_mask & before & ~((1u << start) - 1u));   // full hits before it
    const float weight = full ? __int_as_float((127 - rank) << 23) : 0.f;   // 2^-rank
    Run r{make_float3(weight * col.x, weight * col.y, weight * col.z),
          __int_as_float((127 - rank - (full ? 1 : 0)) << 23)};
    if (!full_mask) return r;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {     // scan within runs
        const float x = __shfl_up_sync(FULL, r.color.x, d);
        const float y = __shfl_up_sync(FULL, r.color.y, d);
        const float z = __shfl_up_sync(FULL, r.color.z, d);
        if (lane - d >= start) {
            r.color.x += x;
            r.color.y += y;
            r.color.z += z;
        }
    }
    return r;
}

// Blends lane l's run (l warp-uniform; l's own hit included when full) into every pixel. T
// times a power of two is exact.
__device__ __forceinline__ void blend_run(float3 (&acc)[PIXELS], float (&T)[PIXELS], Run run, int l) {
    const float run_T = __shfl_sync(FULL, run.T, l);
    if (run_T == 1.f) return;
    const float3 c = make_float3(__shfl_sync(FULL, run.color.x, l), __shfl_sync(FULL, run.color.y, l),
                                 __shfl_sync(FULL, run.color.z, l));
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        acc[p].x = fmaf(T[p], c.x, acc[p].x);
        acc[p].y = fmaf(T[p], c.y, acc[p].y);
        acc[p].z = fmaf(T[p], c.z, acc[p].z);
        T[p] *= run_T;
    }
}

// Flat alpha from T: T = 2^-k after k circles of alpha .5 (every update is exact), so the
// alphas add up to k / 2, and k is T's exponent. Past 126 circles T is flushed to 0, whose bits
// read k = 127: alpha 63.5.
__device__ __forceinline__ float flat_alpha(float T) {
    return .5f * (float)(127 - (__float_as_int(T) >> 23));
}

__device__ __forceinline__ bool any_open(const float (&T)[PIXELS]) {
    bool open = false;
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) open |= T[p] >= T_EPS;
    return open;
}

// One tile (pixels per thread: see SUB_W): walk entries [begin, end) of `list` (listed) or
// circles [begin, end) from the last to the first, STEP a step, composite each step's hits
// front to back, stop once every pixel has T < T_EPS. cleared != 0: the image behind is each
// row's clear colour, else the image.
template <bool SNOW, bool LISTED>
__device__ __forceinline__ void walk_tile(
        int2 t, const float4* __restrict__ circles, const float* __restrict__ colors,
        const uint2* __restrict__ list, int begin, int end,
        float4* __restrict__ image, const float4* __restrict__ rows, int cleared,
        int width, int height) {
    Stage<SNOW>& stage = stage_memory<SNOW>();
    const unsigned tile = (unsigned)t.x * 0x0101u | (unsigned)t.y * 0x01010000u;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int sub_x = t.x * FAST_TILE + warp % (FAST_TILE / SUB_W) * SUB_W;
    const int sub_y = t.y * FAST_TILE + warp / (FAST_TILE / SUB_W) * SUB_H;
    const int x = sub_x + lane % SUB_W, y0 = sub_y + lane / SUB_W;
    const float px = pixel_centre(x, width);
    // the warp's pixel centres span [rect_x0, rect_x1] x [rect_y0, rect_y1]
    const float rect_x0 = pixel_centre(sub_x, width), rect_x1 = pixel_centre(sub_x + SUB_W - 1, width);
    const float rect_y0 = pixel_centre(sub_y, height), rect_y1 = pixel_centre(sub_y + SUB_H - 1, height);
    float py[PIXELS], T[PIXELS], alpha_sum[SNOW ? PIXELS : 1];
    float3 acc[PIXELS];
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + 2 * p;
        py[p] = pixel_centre(y, height);
        T[p] = x < width && y < height ? 1.f : 0.f;
        if (SNOW) alpha_sum[p] = 0.f;
        acc[p] = make_float3(0.f, 0.f, 0.f);
    }

    // the tile's pixel centres, for the cull of circles that are not listed
    const int last_x = min(t.x * FAST_TILE + FAST_TILE, width) - 1;
    const int last_y = min(t.y * FAST_TILE + FAST_TILE, height) - 1;
    const float4 tile_rect = make_float4(pixel_centre(t.x * FAST_TILE, width), pixel_centre(last_x, width),
                                         pixel_centre(t.y * FAST_TILE, height), pixel_centre(last_y, height));
    for (int top = end; top > begin; top -= STEP) {
        cull_step<SNOW, LISTED>(stage, list, circles, colors, top, begin, tile, tile_rect);
        __syncthreads();
        bool open = any_open(T);
        if (SNOW) {
            // each thread runs through the staged hits in order, stopping once its pixels are done
            for (int g = 0; g < CULL_ITEMS * WARPS && open; ++g) {
                for (unsigned mask = stage.hits[g]; mask && open; mask &= mask - 1) {
                    const float4 cj = stage.circle[word_base(g) + __ffs(mask) - 1];
                    PROFILE_STEP_HIT
                    const float dx = __fsub_rn(cj.x, px);
                    const float dxx = __fmul_rn(dx, dx);       // a thread's pixels share their column
                    open = false;
#pragma unroll
                    for (int p = 0; p < PIXELS; ++p) {
                        if (T[p] < T_EPS) continue;
                        const float dy = __fsub_rn(cj.y, py[p]);
                        const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
                        if (d2 <= cj.w * cj.w) {
                            float a;
                            float3 col;
                            snow_shade(d2, cj, a, col);
                            const float w = T[p] * a;
                            acc[p].x += w * col.x;
                            acc[p].y += w * col.y;
                            acc[p].z += w * col.z;
                            T[p] *= 1.f - a;
                            alpha_sum[p] += a;
                        }
                        open |= T[p] >= T_EPS;
                    }
                }
            }
        } else {
            // Warp by warp, 32 hits at a time, one per lane, in order: each lane tests its hit
            // against the warp's sub-tile: does the circle reach it (distance from its centre
            // to the rectangle of pixel centres, with a margin for rounding), and does it cover
            // all of it (covers_rect, exact). With several pixels a thread, the hits that
            // cover it all need no per-pixel test: each run of them between two partial hits
            // is folded across the lanes into one colour and one transmittance (fold_runs),
            // and the warp's loop visits only the partial hits, blending the run before each
            // into every pixel at once (4 operations a pixel). Partial hits are blended
            // branch-free, so the pixels are independent chains. Alpha is .5, so T stays a
            // power of two and every T update is exact.
            const StagedHits staged = staged_hits(stage.hits);
            const int count = __shfl_sync(FULL, staged.incl, 31);
            open = __any_sync(FULL, open);
            for (int j0 = 0; j0 < count && open; j0 += 32) {
                const int at = hit_place(staged, min(j0 + lane, count - 1));
                bool near = false, full = false;
                float4 col = make_float4(0.f, 0.f, 0.f, 0.f);
                if (j0 + lane < count) {
                    const float4 c = stage.circle[at];
                    near = reaches(c, rect_x0, rect_x1, rect_y0, rect_y1);
                    full = PIXELS > 1 && near && covers_rect(c, rect_x0, rect_x1, rect_y0, rect_y1);
                    if (full) col = stage.color[at];
                }
                const unsigned full_mask = __ballot_sync(FULL, full);
                const unsigned partial_mask = __ballot_sync(FULL, near) & ~full_mask;
                const Run run = fold_runs(full_mask, partial_mask, full, col);
                int partials = 0;
                for (unsigned mask = partial_mask; mask; mask &= mask - 1) {
                    const int b = __ffs(mask) - 1;
                    blend_run(acc, T, run, b);              // the run just before hit b, if any
                    PROFILE_STEP_HIT
                    const int place = __shfl_sync(FULL, at, b);
                    const float4 cj = stage.circle[place];
                    const float4 cb = stage.color[place];
                    const float dx = __fsub_rn(cj.x, px);
                    const float dxx = __fmul_rn(dx, dx);
#pragma unroll
                    for (int p = 0; p < PIXELS; ++p) {
                        const float dy = __fsub_rn(cj.y, py[p]);
                        const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
                        const float w = d2 <= cj.z ? T[p] : 0.f;
                        acc[p].x = fmaf(w, cb.x, acc[p].x);
                        acc[p].y = fmaf(w, cb.y, acc[p].y);
                        acc[p].z = fmaf(w, cb.z, acc[p].z);
                        T[p] = fmaf(-.5f, w, T[p]);
                    }
                    if (++partials % BLEND_CHECK == 0 && !__any_sync(FULL, any_open(T))) break;
                }
                // the run after the last partial hit (held by lane 31, unless that is partial)
                if (!(partial_mask >> 31)) blend_run(acc, T, run, 31);
                open = __any_sync(FULL, any_open(T));
            }
        }
        PROFILE_STEP
        if (__syncthreads_and(!open)) break;     // also guards the stage's reuse
    }
    // flat: every load before the first store (the stores may alias the loads, so they would
    // not be reordered, and each pixel would wait for its own load); snow holds more values
    // at this point, and loads as it stores
    const auto behind_at = [&](int px_x, int px_y) { return cleared ? rows[px_y] : image[px_y * width + px_x]; };
    float4 behind[PIXELS];
    if (!SNOW) {
#pragma unroll
        for (int p = 0; p < PIXELS; ++p) behind[p] = behind_at(min(x, width - 1), min(y0 + 2 * p, height - 1));
    }
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + 2 * p;
        if (x < width && y < height) {
            if (SNOW) behind[p] = behind_at(x, y);
            const float alpha = SNOW ? alpha_sum[p] : flat_alpha(T[p]);
            image[y * width + x] = make_float4(acc[p].x + T[p] * behind[p].x, acc[p].y + T[p] * behind[p].y,
                                               acc[p].z + T[p] * behind[p].z, behind[p].w + alpha);
        }
    }
}

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

// ---- the sparse path: scenes with few circles over any pixel (micro2M) ----
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

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, 4)
render_sparse(RENDER_SPARSE_PARAMS) { render_sparse_body<false>(RENDER_SPARSE_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, 4)
render_sparse_snow(RENDER_SPARSE_PARAMS) { render_sparse_body<true>(RENDER_SPARSE_ARGS); }
#endif
