// The fast renderer's sparse path, stages "sparse_bin" (sparse_sort; over 2048 pixels a side
// sparse_count, sparse_scan_chunks, sparse_scan_tiles, sparse_emit) and "sparse_draw"
// (render_sparse): scenes with few circles
// over any pixel (micro2M). Every pixel's circles fit a short list, so circle order is restored
// per pixel instead of per list. NumPy twins: circle_render/twins/sparse.py.
//
// Binning. Circles are taken in chunks of SPARSE_CHUNK, and every circle is listed under each
// tile (SPARSE_TILE pixels a side) its pixel box touches. With shared counting (SPARSE_SHARED:
// up to SPARSE_SHARED_TILES tiles, images of up to 2048 pixels a side) one kernel, sparse_sort,
// a block a chunk, makes a chunk-major list: chunk b's entries lie end to end, tile by tile,
// from starts[b]. It counts each tile's circles of the chunk in shared memory (16-bit counters,
// two a word; no global atomics), scans the counts over the tiles (offsets[b][t] = where tile
// t's segment begins among the chunk's entries, offsets[b][tiles] = their number), places each
// entry at its tile's offset plus its rank (in no order within a segment) in shared memory, and
// writes the chunk's entries out whole: coalesced. (Written one by one to their places, each
// entry is an L2 request of its own: 56 against 34 us for micro2M at 1024, counting included.)
// Where its chunk begins, a block learns from the totals the chunks before it publish.
// Tile t's list is then its segments, one per chunk, in chunk order: segment b is
// [starts[b] + offsets[b][t], starts[b] + offsets[b][t + 1]); the draw gathers them.
// With more tiles (global counting, SPARSE_SHARED 0) the counters do not fit in shared memory:
// one "chunk" holds every circle and the list is tile-major, made by four kernels:
// sparse_count (global atomics), sparse_scan_chunks and sparse_scan_tiles (the counts scanned
// in groups of 32 tiles: tile t's list starts at group_starts[t / 32] + local[t]), sparse_emit
// (each entry at its list's start plus its rank, from global atomics again); render_sparse
// zeroes the counts for the next frame.
//
// Drawing. render_sparse, one block per tile, one pixel per thread, finds its tile's segments a
// thread a segment (SPARSE_THREADS at a time: a window) and takes them in rounds of whole
// segments (at most SPARSE_STAGE entries: one round for micro2M at 1024). A round is staged in
// shared memory (stage_round): each entry's place in circle order is found by ranking it within
// its segment, and its record (pack_records' 32 bytes) is stored at that place.
// Then, in one of two ways (SPARSE_BITS, the plan's choice by the circles' size), every pixel
// blends the circles that cover it in that order, exactly as the serial reference does:
// - pixel bits (small circles): while staging, each circle sets the bit of its place in every
//   pixel of the tile it covers (a bit mask a pixel; shared atomicOr); each thread then blends
//   its pixel's circles from its bits, low to high (blend_marked). A circle tests only its box's
//   pixels, a pixel visits only its own circles;
// - the warp walk (larger circles): each warp takes the staged circles 32 at a time and blends
//   those that reach its 8x4 pixels, one after the other (blend_walked); a circle covers much of
//   a warp's pixels, so the lanes are busy.
// A segment longer than the stage takes a slower exact route (pixel by pixel, the next circle in
// index order).
#include "tiles.cuh"
#include "scan.cuh"
#include "profile.cuh"

constexpr int SPARSE_THREADS = SPARSE_TILE * SPARSE_TILE;     // a pixel a thread
constexpr int SCAN_WARPS = BIN_THREADS / 32;
static_assert(SPARSE_THREADS == BLOCK_THREADS, "render_sparse is one pixel per thread of a block");
static_assert(SPARSE_CHUNK <= 65535, "a chunk's circles in one tile are counted in 16 bits");
static_assert(SPARSE_GROUP_TILES == 32, "sparse_scan_chunks: a lane a tile");

template <class Visit>
__device__ __forceinline__ void for_each_tile(TileBox b, int tiles_x, Visit visit) {
    for (int ty = b.y0; ty <= b.y1; ++ty)
        for (int tx = b.x0; tx <= b.x1; ++tx) visit(ty * tiles_x + tx);
}

// 16-bit counter t of the block's shared counters: add one, return what it held.
__device__ __forceinline__ int bump16(unsigned* counters, int t) {
    const int shift = 16 * (t & 1);
    return (int)(atomicAdd(&counters[t >> 1], 1u << shift) >> shift & 0xffffu);
}

__device__ __forceinline__ void zero_counters(unsigned* counters, int tiles) {
    for (int k = threadIdx.x; k < (tiles + 1) / 2; k += SPARSE_BIN_THREADS) counters[k] = 0u;
    __syncthreads();
}

// Where tile t's list begins: its group's start and its place in the group.
__device__ __forceinline__ int list_start(const int* __restrict__ group_starts, const int* __restrict__ local,
                                          int t) {
    return group_starts[t / SPARSE_GROUP_TILES] + local[t];
}

// The counter of tile t among the block's 16-bit counters.
__device__ __forceinline__ int counter16(const unsigned* counters, int t) {
    return (int)(counters[t >> 1] >> (16 * (t & 1)) & 0xffffu);
}

// Shared counting: the sum of chunks [0, b)'s entries, each chunk's as published in status[j]
// (the frame's number above, its total below), waiting for those not yet published. A chunk
// publishes before it waits, and chunks before b started before it (tickets), so this ends.
// Every thread must call it.
__device__ __forceinline__ int entries_before(const unsigned long long* status, int b, unsigned frame,
                                              int* warp_sums) {
    int sum = 0;
    for (int j = threadIdx.x; j < b; j += SPARSE_BIN_THREADS) {
        unsigned long long v;
        do v = *(volatile const unsigned long long*)&status[j]; while ((unsigned)(v >> 32) != frame);
        sum += (int)(unsigned)v;
    }
    int all;
    block_exclusive_scan<SPARSE_BIN_THREADS>(sum, all, warp_sums);
    return all;
}

// Shared counting, one block a chunk (in the order of a ticket, not of blockIdx): counts the
// chunk's circles in each tile (16-bit shared counters), scans them over the tiles into row b of
// offsets (tiles + 1 ints, the chunk's total last), publishes that total, places each entry at
// its tile's offset plus its rank in shared memory (dynamic: the counters, the row, then
// `held` entries), learns where the chunk begins (starts[b]: the totals of the chunks before it)
// and writes its entries out whole, coalesced. A chunk of more than `held` entries writes them
// one by one. Entries from `capacity` on are dropped. ticket counts blocks over all frames.
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS, 2)
sparse_sort(const float4* __restrict__ circles, int n, int width, int height, int tiles_x, int tiles, int chunks,
            int* __restrict__ offsets, int* __restrict__ starts, unsigned long long* __restrict__ ticket,
            unsigned long long* __restrict__ status, int* __restrict__ list, int capacity, int held) {
    extern __shared__ unsigned words[];
    __shared__ int warp_sums[32];
    __shared__ unsigned long long taken;
    unsigned* counters = words;
    int* row = (int*)(words + (tiles + 1) / 2);
    int* entries = row + tiles + 1;
    if (threadIdx.x == 0) taken = atomicAdd(ticket, 1ull);
    zero_counters(counters, tiles);
    const int b = (int)(taken % (unsigned)chunks);
    const unsigned frame = (unsigned)(taken / (unsigned)chunks) + 1u;     // never 0: status starts zeroed
    const int first = b * SPARSE_CHUNK, end = min(n, first + SPARSE_CHUNK);
    for (int i = first + threadIdx.x; i < end; i += SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) { bump16(counters, t); });
    __syncthreads();
    int* out = offsets + b * (tiles + 1);
    const int count = block_exclusive_scan_n<SPARSE_BIN_THREADS>(
        tiles, [&](int t) { return counter16(counters, t); },
        [&](int t, int before) { row[t] = out[t] = before; }, warp_sums);
    if (threadIdx.x == 0) {
        out[tiles] = count;
        __threadfence();
        atomicExch(&status[b], (unsigned long long)frame << 32 | (unsigned)count);
    }
    zero_counters(counters, tiles);
    const bool whole = count <= held;          // the same for every thread
    const int base = whole ? 0 : entries_before(status, b, frame, warp_sums);
    for (int i = first + threadIdx.x; i < end; i += SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) {
            const int j = row[t] + bump16(counters, t);
            if (whole) entries[j] = i;
            else if (base + j < capacity) list[base + j] = i;
        });
    const int at = whole ? entries_before(status, b, frame, warp_sums) : base;   // has a barrier
    if (threadIdx.x == 0) {
        starts[b] = at;
        if (b == chunks - 1) starts[chunks] = at + count;
    }
    if (whole)
        for (int j = threadIdx.x; j < count && at + j < capacity; j += SPARSE_BIN_THREADS) list[at + j] = entries[j];
}

// Global counting: counts[t] += circles touching tile t.
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_x,
             int* __restrict__ counts) {
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x,
                      [&](int t) { atomicAdd(&counts[t], 1); });
}

// Global counting. Warp g of all: tiles [32g, 32g + 32), a lane each: local[t] = the counts of
// the group's tiles before t, totals[t] = counts[t] (which becomes 0: sparse_emit counts ranks
// from it), group_totals[g] = the group's sum.
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
sparse_scan_chunks(int* __restrict__ counts, int tiles, int* __restrict__ totals, int* __restrict__ local,
                   int* __restrict__ group_totals) {
    const int lane = threadIdx.x & 31, group = blockIdx.x * SCAN_WARPS + (threadIdx.x >> 5);
    const int t = group * SPARSE_GROUP_TILES + lane;
    if (group * SPARSE_GROUP_TILES >= tiles) return;          // the whole warp
    const int total = t < tiles ? counts[t] : 0;
    const int incl = warp_inclusive_scan(total);
    if (t < tiles) {
        totals[t] = total;
        local[t] = incl - total;
        counts[t] = 0;
    }
    if (lane == 31) group_totals[group] = incl;
}

// Global counting, one block: group_starts[g] = group_totals[0] + ... + group_totals[g - 1];
// group_starts[groups] = all entries. Each thread scans a run of consecutive group totals
// (three barriers in all).
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
sparse_scan_tiles(const int* __restrict__ group_totals, int groups, int* __restrict__ group_starts) {
    __shared__ int warp_sums[32];
    const int per = (groups + SCAN_BLOCK - 1) / SCAN_BLOCK;
    const int lo = min(groups, (int)threadIdx.x * per), hi = min(groups, lo + per);
    int sum = 0;
    for (int k = lo; k < hi; ++k) sum += group_totals[k];
    int all;
    int before = block_exclusive_scan<SCAN_BLOCK>(sum, all, warp_sums);
    for (int k = lo; k < hi; ++k) {
        group_starts[k] = before;
        before += group_totals[k];
    }
    if (threadIdx.x == 0) group_starts[groups] = all;
}

// Global counting: each entry at tile t's list start plus its rank, counts[t] counting ranks
// (from 0: sparse_scan_chunks).
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_x,
            int* __restrict__ counts, const int* __restrict__ group_starts, const int* __restrict__ local,
            int* __restrict__ list, int capacity) {
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) {
            const int pos = list_start(group_starts, local, t) + atomicAdd(&counts[t], 1);
            if (pos < capacity) list[pos] = i;
        });
}

// ---- render_sparse ----

// records[2i] = circle i (x, y, z, r), records[2i + 1] = its colour (r, g, b, 0): one aligned 32-byte
// sector a circle, so render_sparse's gathers (each tile its circles, in random order from
// DRAM) read one sector an entry instead of two or three. Run once at load for still scenes,
// every frame for animated ones.
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
pack_records(const float4* __restrict__ circles, const float* __restrict__ colors, int n,
             float4* __restrict__ records) {
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS) {
        records[2 * i] = circles[i];
        records[2 * i + 1] = make_float4(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2], 0.f);
    }
}

// A round's circles: the list entries as loaded, then at their places in circle order each
// circle's record: flat with pixel bits, alpha * colour (r, g, b, 0) in colour[k]; otherwise
// also the circle in circle[k] (flat walk: (x, y, r^2, r) and alpha * colour; snow: as packed;
// two arrays, not one of pairs, so that a warp reads 32 neighbouring circles). With
// pixel bits (SPARSE_BITS), bits[w][q]: bit b says that the circle at place 32w + b covers pixel
// q of the tile (q = a thread, row-major); snow then stages two thirds as many circles.
template <bool SNOW>
struct SparseStage {
    static constexpr int SIZE = SNOW && SPARSE_BITS ? SPARSE_STAGE * 2 / 3 : SPARSE_STAGE;
    static constexpr int WORDS = SIZE / 32;
    static constexpr bool CIRCLES = SNOW || !SPARSE_BITS;          // the circles are staged too
    int index[SIZE];
    float4 colour[SIZE];
    float4 circle[CIRCLES ? SIZE : 1];
    unsigned bits[SPARSE_BITS ? WORDS : 1][SPARSE_THREADS];
    int warp_sums[32];                 // the window's scan
    int round_end;                     // where the round ends among the window's entries
    int2 long_segment;                 // the segment at the round's start (taken alone when too long)
};
static_assert(SPARSE_STAGE % 96 == 0, "both stages are whole 32-bit words of places");

template <bool SNOW>
__device__ __forceinline__ void shade_circle(float4& p, float4 c, float3 colour, float px, float py) {
    const float d2 = dist2(c, px, py);
    if (d2 > c.w * c.w) return;
    float alpha = FLAT_ALPHA;
    float3 col = colour;
    if (SNOW) snow_shade(d2, c, alpha, col);
    blend(p, alpha, col);
}

// The reference's flat blend, alpha * colour + (1 - alpha) * p, from alpha * colour (both
// products exact: alpha is 1/2).
__device__ __forceinline__ void blend_flat(float4& p, float4 alpha_colour) {
    p.x = fmaf(1.f - FLAT_ALPHA, p.x, alpha_colour.x);
    p.y = fmaf(1.f - FLAT_ALPHA, p.y, alpha_colour.y);
    p.z = fmaf(1.f - FLAT_ALPHA, p.z, alpha_colour.z);
    p.w += FLAT_ALPHA;
}

// Which segment of a tile's list circle i belongs to: its chunk (shared counting), or the one
// segment of the whole list (global atomics).
__device__ __forceinline__ int segment_of(int i) { return SPARSE_SHARED ? (int)((unsigned)i / SPARSE_CHUNK) : 0; }

// Shared counting: tile t's segment of chunk b, where it starts in the list and its entries.
__device__ __forceinline__ int2 tile_segment(const int* __restrict__ offsets, const int* __restrict__ starts,
                                             int tiles, int b, int t) {
    const int* row = offsets + b * (tiles + 1);
    const int at = row[t];
    return make_int2(starts[b] + at, row[t + 1] - at);
}

// Copies a segment (if `mine`) to index[to ...]: its first SPARSE_AHEAD entries from `ahead`, the
// rest of a short one by its thread, of a longer one by its whole warp (every lane must call).
__device__ __forceinline__ void copy_segment(int* index, const int* __restrict__ list, int2 segment,
                                             const int (&ahead)[SPARSE_AHEAD], bool mine, int to) {
    constexpr int SHORT = 4 * SPARSE_AHEAD;
    if (mine) {
#pragma unroll
        for (int k = 0; k < SPARSE_AHEAD; ++k)
            if (k < segment.y) index[to + k] = ahead[k];
        if (segment.y <= SHORT)
            for (int k = SPARSE_AHEAD; k < segment.y; ++k) index[to + k] = list[segment.x + k];
    }
    for (unsigned m = __ballot_sync(FULL, mine && segment.y > SHORT); m; m &= m - 1) {
        const int from = __ffs(m) - 1;
        const int src = __shfl_sync(FULL, segment.x, from), len = __shfl_sync(FULL, segment.y, from);
        const int dst = __shfl_sync(FULL, to, from);
        for (int k = SPARSE_AHEAD + (threadIdx.x & 31); k < len; k += 32) index[dst + k] = list[src + k];
    }
}

// The exact slow route for entries [lo, hi) of the list: the pixel blends, again and again, the
// covering circle with the smallest index above the last one it blended.
template <bool SNOW>
__device__ __forceinline__ void blend_in_index_order(float4& p, const int* __restrict__ list, int lo, int hi,
                                                     const float4* __restrict__ circles,
                                                     const float* __restrict__ colors, float px, float py) {
    for (int last = -1;;) {
        int best = 0x7fffffff;
        for (int k = lo; k < hi; ++k) {
            const int i = list[k];
            if (i > last && i < best && dist2(circles[i], px, py) <= circles[i].w * circles[i].w) best = i;
        }
        if (best == 0x7fffffff) return;
        shade_circle<SNOW>(p, circles[best], make_float3(colors[3 * best], colors[3 * best + 1], colors[3 * best + 2]),
                           px, py);
        last = best;
    }
}

// Entry e's place among entries [0, count) (whole segments) in circle order: its segment's
// start plus the entries of its segment with smaller indices (segments are short: micro2M's
// hold 2 to 3 circles at 1024 pixels; with global counting the whole round is one, ~70).
__device__ __forceinline__ int place_in_order(const int* index, int e, int count) {
    const int i = index[e], s = segment_of(i);
    int a = e, z = e + 1;
    if (!SPARSE_SHARED) a = 0, z = count;
    while (a > 0 && segment_of(index[a - 1]) == s) --a;
    while (z < count && segment_of(index[z]) == s) ++z;
    int place = a;
    for (int k = a; k < z; ++k) place += index[k] < i;
    return place;
}

// Sets bit `place` in each pixel of the tile (first pixel x0, y0) that circle c covers: the
// pixels of its box (as the reference clamps it) whose centres pass the reference's test.
__device__ __forceinline__ void mark_cover(unsigned* word, float4 c, int place, int x0, int y0, int width,
                                           int height) {
    const PixelBox b = circle_box(c, width, height);
    const int xa = max(b.x0, x0), xb = min(b.x1, x0 + SPARSE_TILE);
    const int ya = max(b.y0, y0), yb = min(b.y1, y0 + SPARSE_TILE);
    const float r2 = __fmul_rn(c.w, c.w);
    const unsigned bit = 1u << (place & 31);
    for (int y = ya; y < yb; ++y) {
        const float dy = __fsub_rn(c.y, pixel_centre(y, height));
        const float dyy = __fmul_rn(dy, dy);
        for (int x = xa; x < xb; ++x) {
            const float dx = __fsub_rn(c.x, pixel_centre(x, width));
            if (__fadd_rn(__fmul_rn(dx, dx), dyy) <= r2) atomicOr(&word[(y - y0) * SPARSE_TILE + x - x0], bit);
        }
    }
}

// The round that starts at entry `done` of the window: its segments from there that end within
// done + size (whole segments, in chunk order). Returns where the round ends: done itself when
// the segment at done alone is longer than the stage (it is then in st.long_segment).
template <bool SNOW>
__device__ __forceinline__ int round_end(SparseStage<SNOW>& st, int2 segment, int at, int done, int size) {
    if (threadIdx.x == 0) st.round_end = done;
    __syncthreads();
    if (segment.y > 0 && at >= done && at + segment.y <= done + size) atomicMax(&st.round_end, at + segment.y);
    if (segment.y > 0 && at == done) st.long_segment = segment;
    __syncthreads();
    return st.round_end;
}

// Stages the round's count entries (whole segments in chunk order, count <= SIZE, in st.index
// once the barrier is passed): each circle's record at its place in circle order and, with
// pixel bits, that place's bit in every pixel of the tile it covers (the bits are zero:
// blend_marked leaves them so). Each thread loads the next record while it stores the current.
template <bool SNOW>
__device__ __forceinline__ void stage_round(SparseStage<SNOW>& st, int count, const float4* __restrict__ records,
                                            int x0, int y0, int width, int height) {
    __syncthreads();
    int e = (int)threadIdx.x;
    float4 c, col;
    if (e < count) c = records[2 * st.index[e]], col = records[2 * st.index[e] + 1];
    for (; e < count; e += SPARSE_THREADS) {
        const float4 here = c, colour = col;
        if (e + SPARSE_THREADS < count) {
            const int next = st.index[e + SPARSE_THREADS];
            c = records[2 * next], col = records[2 * next + 1];
        }
        const int place = place_in_order(st.index, e, count);
        if (SNOW) {
            st.circle[place] = here;
            st.colour[place] = colour;
        } else {           // alpha * colour; the walk: r^2 as the reference rounds it
            st.colour[place] = make_float4(FLAT_ALPHA * colour.x, FLAT_ALPHA * colour.y, FLAT_ALPHA * colour.z, 0.f);
            if (!SPARSE_BITS) st.circle[place] = make_float4(here.x, here.y, __fmul_rn(here.w, here.w), here.w);
        }
        if (SPARSE_BITS) mark_cover(st.bits[place >> 5], here, place, x0, y0, width, height);
    }
    __syncthreads();
}

// Pixel bits: this thread's pixel blends the round's circles that cover it in circle order (its
// bits, low to high), as the reference does, and zeroes its bits for the next round.
template <bool SNOW>
__device__ __forceinline__ void blend_marked(SparseStage<SNOW>& st, int count, float4& p, float px, float py) {
    const int words = (count + 31) / 32;
    for (int w = 0; w < words; ++w) {
        unsigned word = st.bits[w][threadIdx.x];
        if (!word) continue;
        st.bits[w][threadIdx.x] = 0u;
        do {
            const int k = w * 32 + __ffs(word) - 1;
            word &= word - 1u;
            if (SNOW) {
                const float4 col = st.colour[k];
                shade_circle<SNOW>(p, st.circle[k], make_float3(col.x, col.y, col.z), px, py);
            } else {
                blend_flat(p, st.colour[k]);
            }
        } while (word);
    }
}

// The warp walk: the warp's pixels (rectangle [rx0, rx1] x [ry0, ry1] of centres) take the
// round's circles in order, 32 at a time: those that reach the rectangle, each blended into
// the pixels it covers, one after the other.
template <bool SNOW>
__device__ __forceinline__ void blend_walked(SparseStage<SNOW>& st, int count, float4& p, float px, float py,
                                             float rx0, float rx1, float ry0, float ry1) {
    const int lane = threadIdx.x & 31;
    for (int j0 = 0; j0 < count; j0 += 32) {
        const bool near = j0 + lane < count && reaches(st.circle[j0 + lane], rx0, rx1, ry0, ry1);
        for (unsigned mask = __ballot_sync(FULL, near); mask; mask &= mask - 1) {
            const int k = j0 + __ffs(mask) - 1;
            const float4 c = st.circle[k], ex = st.colour[k];
            if (SNOW) shade_circle<SNOW>(p, c, make_float3(ex.x, ex.y, ex.z), px, py);
            else if (dist2(c, px, py) <= c.z) blend_flat(p, ex);
        }
    }
}

// Without pixel bits each warp draws a SPARSE_SUB_W x SPARSE_SUB_H block of the tile, a pixel a
// lane: squarer than a row strip, so fewer staged circles reach it.
constexpr int SPARSE_SUB_W = 8, SPARSE_SUB_H = 32 / SPARSE_SUB_W;
static_assert(SPARSE_TILE % SPARSE_SUB_W == 0 && SPARSE_TILE % SPARSE_SUB_H == 0, "sub-tiles split the tile");

template <bool SNOW>
__device__ __forceinline__ void render_sparse_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, const float4* __restrict__ records,
        int n, const int* __restrict__ list, int* __restrict__ offsets, const int* __restrict__ starts,
        const int* __restrict__ local, const int* __restrict__ totals, int chunks, int capacity,
        float4* __restrict__ image, const float4* __restrict__ rows, int cleared, int width, int height) {
    PROFILE_START
    __shared__ SparseStage<SNOW> st;
    static_assert(sizeof(SparseStage<SNOW>) <= 48 * 1024, "render_sparse's stage fits 48 KB: a smaller SPARSE_STAGE");
    constexpr int SIZE = SparseStage<SNOW>::SIZE;
    const int2 t = tile_of_block();
    const int tiles = gridDim.x * gridDim.y, tile = t.y * gridDim.x + t.x;
    const int x0 = t.x * SPARSE_TILE, y0 = t.y * SPARSE_TILE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // pixel bits: row-major; the walk: the warp's sub-tile, spanning [rx0, rx1] x [ry0, ry1]
    const int sub_x = x0 + warp % (SPARSE_TILE / SPARSE_SUB_W) * SPARSE_SUB_W;
    const int sub_y = y0 + warp / (SPARSE_TILE / SPARSE_SUB_W) * SPARSE_SUB_H;
    const int x = SPARSE_BITS ? x0 + (int)threadIdx.x % SPARSE_TILE : sub_x + lane % SPARSE_SUB_W;
    const int y = SPARSE_BITS ? y0 + (int)threadIdx.x / SPARSE_TILE : sub_y + lane / SPARSE_SUB_W;
    const float rx0 = pixel_centre(sub_x, width), rx1 = pixel_centre(sub_x + SPARSE_SUB_W - 1, width);
    const float ry0 = pixel_centre(sub_y, height), ry1 = pixel_centre(sub_y + SPARSE_SUB_H - 1, height);
    const bool inside = x < width && y < height;
    const float px = pixel_centre(x, width), py = pixel_centre(y, height);
    float4 p = inside ? (cleared ? rows[y] : image[y * width + x]) : make_float4(0.f, 0.f, 0.f, 0.f);
    if (SPARSE_BITS)
        for (int w = 0; w < SparseStage<SNOW>::WORDS; ++w) st.bits[w][threadIdx.x] = 0u;
    const bool cut = starts[SPARSE_SHARED ? chunks : (tiles + SPARSE_GROUP_TILES - 1) / SPARSE_GROUP_TILES] > capacity;
    if (cut) {                             // the lists were cut short (a capacity chosen too small)
        for (int i = 0; i < n; ++i)
            shade_circle<SNOW>(p, circles[i], make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]), px, py);
    }
    auto draw_round = [&](int count) {     // the round's entries are in st.index (barrier to come)
        stage_round<SNOW>(st, count, records, x0, y0, width, height);
        if (SPARSE_BITS) blend_marked<SNOW>(st, count, p, px, py);
        else blend_walked<SNOW>(st, count, p, px, py, rx0, rx1, ry0, ry1);
    };
#if SPARSE_SHARED
    // Windows of SPARSE_THREADS segments, a thread a segment; each window's entries are placed
    // end to end (at: where this thread's segment begins) and drawn in rounds of whole segments
    // (one, when the window fits the stage: micro2M at 1024). Rounds need no barrier at their
    // end: the blends read no index, which a round writes first.
    for (int w0 = 0; w0 < chunks && !cut; w0 += SPARSE_THREADS) {
        const int b = w0 + (int)threadIdx.x;
        const int2 segment = b < chunks ? tile_segment(offsets, starts, tiles, b, tile) : make_int2(0, 0);
        int ahead[SPARSE_AHEAD];           // the segment's first entries, loaded while the block scans
#pragma unroll
        for (int k = 0; k < SPARSE_AHEAD; ++k) ahead[k] = k < segment.y ? list[segment.x + k] : 0;
        int in_window;
        const int at = block_exclusive_scan<SPARSE_THREADS>(segment.y, in_window, st.warp_sums);
        for (int done = 0; done < in_window;) {
            const int hi = in_window - done <= SIZE ? in_window : round_end(st, segment, at, done, SIZE);
            if (hi == done) {              // one segment longer than the stage
                const int2 s = st.long_segment;
                __syncthreads();           // read before the next round rewrites them
                blend_in_index_order<SNOW>(p, list, s.x, s.x + s.y, circles, colors, px, py);
                done += s.y;
                continue;
            }
            copy_segment(st.index, list, segment, ahead, at >= done && at + segment.y <= hi, at - done);
            draw_round(hi - done);
            done = hi;
        }
    }
#else
    // One list, the tile's: one round, or the slow route when it is longer than the stage.
    const int begin = list_start(starts, local, tile), count = totals[tile];
    if (count > SIZE && !cut) {
        blend_in_index_order<SNOW>(p, list, begin, begin + count, circles, colors, px, py);
    } else if (!cut) {
        for (int e = threadIdx.x; e < count; e += SPARSE_THREADS) st.index[e] = list[begin + e];
        draw_round(count);
    }
    if (threadIdx.x == 0) offsets[tile] = 0;       // global counters: zero for the next frame
#endif
    if (inside) image[y * width + x] = p;
    PROFILE_END
}

// offsets and starts: with shared counting, each chunk's row of tile offsets and where each
// chunk's entries start (local, totals unused); with global counting, the tiles' counters (zeroed
// here for the next frame) and where each group of tiles' lists start, with local and totals.
#define RENDER_SPARSE_PARAMS                                                                   \
    const float4* __restrict__ circles, const float* __restrict__ colors,                     \
    const float4* __restrict__ records, int n, const int* __restrict__ list,                  \
    int* __restrict__ offsets, const int* __restrict__ starts,                                \
    const int* __restrict__ local, const int* __restrict__ totals,                            \
    int chunks, int capacity, float4* __restrict__ image, const float4* __restrict__ rows,    \
    int cleared, int width, int height
#define RENDER_SPARSE_ARGS circles, colors, records, n, list, offsets, starts, local, totals, chunks, \
    capacity, image, rows, cleared, width, height

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
render_sparse(RENDER_SPARSE_PARAMS) { render_sparse_body<false>(RENDER_SPARSE_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
render_sparse_snow(RENDER_SPARSE_PARAMS) { render_sparse_body<true>(RENDER_SPARSE_ARGS); }
