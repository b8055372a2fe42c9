// The fast renderer's sparse path, stages "sparse_bin" (sparse_count, sparse_scan_chunks,
// sparse_scan_tiles, sparse_emit) and "sparse_draw" (render_sparse): scenes with few circles
// over any pixel (micro2M). Every pixel's circles fit a short list, so circle order is restored
// per pixel instead of per list. NumPy twins: circle_render/twins/sparse.py.
//
// Binning. Circles are taken in chunks of SPARSE_CHUNK, one block a chunk, and every circle is
// listed under each tile (SPARSE_TILE pixels a side) its pixel box touches:
// 1. sparse_count: counts[b * tiles + t] = circles of chunk b touching tile t, counted in shared
//    memory (16-bit counters, two a word; no global atomics);
// 2. sparse_scan_chunks, a block per 32 tiles: each tile's column of counts becomes offsets
//    within the tile's list (in place), totals[t] the list's length, local[t] where the list
//    starts among its group of 32 tiles, and group_totals[g] the group's entries;
// 3. sparse_scan_tiles: group_starts[g] = where group g's lists begin (all lists lie end to
//    end), group_starts[groups] = all entries. A list starts at list_start(t) =
//    group_starts[t / 32] + local[t];
// 4. sparse_emit: each circle's index goes to list_start(t) + counts[b * tiles + t] + its place
//    among chunk b's circles in t. A tile's list is its chunks' segments in chunk order, and
//    within a segment the circles in no order. (Writing 32-byte records of the circles instead,
//    so that the draw would not gather them, made sparse_emit twice as slow: 234 against 106 us
//    for micro2M at 1024, for 38 us less in the draw.)
// With more tiles than SPARSE_SHARED_TILES (images over 2048 pixels a side) the counters do not
// fit in shared memory: SPARSE_SHARED is 0, one "chunk" holds every circle, and sparse_count
// and sparse_emit use global atomics (render_sparse zeroes the counts for the next frame).
//
// Drawing. render_sparse, one block per tile, one pixel per thread, takes the tile's list in
// rounds of whole segments (at most SPARSE_STAGE entries: one round for micro2M at 1024). A
// round is staged in shared memory (stage_round): each entry's place in circle order is found by
// ranking it within its segment, and its record (pack_records' 32 bytes) is stored at that place.
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

#if SPARSE_SHARED
__device__ __forceinline__ void zero_counters(unsigned* counters, int tiles) {
    for (int k = threadIdx.x; k < (tiles + 1) / 2; k += SPARSE_BIN_THREADS) counters[k] = 0u;
    __syncthreads();
}
#endif

// Where tile t's list begins: its group's start and its place in the group.
__device__ __forceinline__ int list_start(const int* __restrict__ group_starts, const int* __restrict__ local,
                                          int t) {
    return group_starts[t / SPARSE_GROUP_TILES] + local[t];
}

extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_x, int tiles,
             int* __restrict__ counts) {
#if SPARSE_SHARED
    __shared__ unsigned counters[SPARSE_SHARED_TILES / 2];
    zero_counters(counters, tiles);
    const int end = min(n, (blockIdx.x + 1) * SPARSE_CHUNK);
    for (int i = blockIdx.x * SPARSE_CHUNK + threadIdx.x; i < end; i += SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) { bump16(counters, t); });
    __syncthreads();
    for (int t = threadIdx.x; t < tiles; t += SPARSE_BIN_THREADS)
        counts[blockIdx.x * tiles + t] = (int)(counters[t >> 1] >> (16 * (t & 1)) & 0xffffu);
#else
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x,
                      [&](int t) { atomicAdd(&counts[t], 1); });
#endif
}

// Block g: tiles [32g, 32g + 32), a lane each; the 8 warps split the chunks. Tile t's column of
// counts (one per chunk) becomes its exclusive prefix in place, totals[t] its sum; local[t] =
// the totals of the group's tiles before t; group_totals[g] = the group's sum. Loads are
// coalesced (32 neighbouring tiles of one chunk at a time).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
sparse_scan_chunks(int* __restrict__ counts, int chunks, int tiles, int* __restrict__ totals,
                   int* __restrict__ local, int* __restrict__ group_totals) {
    __shared__ int partial[SCAN_WARPS][SPARSE_GROUP_TILES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int t = blockIdx.x * SPARSE_GROUP_TILES + lane;
    const int per = (chunks + SCAN_WARPS - 1) / SCAN_WARPS;
    const int b0 = min(chunks, warp * per), b1 = min(chunks, b0 + per);
    int sum = 0;
    if (t < tiles)
        for (int b = b0; b < b1; ++b) sum += counts[b * tiles + t];
    partial[warp][lane] = sum;
    __syncthreads();
    int running = 0, total = 0;            // this warp's chunks start after the earlier warps'
    for (int w = 0; w < SCAN_WARPS; ++w) {
        running += w < warp ? partial[w][lane] : 0;
        total += partial[w][lane];
    }
    if (t < tiles)
        for (int b = b0; b < b1; ++b) {
            const int v = counts[b * tiles + t];
            counts[b * tiles + t] = running;
            running += v;
        }
    if (warp == 0) {
        const int incl = warp_inclusive_scan(t < tiles ? total : 0);
        if (t < tiles) {
            totals[t] = total;
            local[t] = incl - total;
        }
        if (lane == 31) group_totals[blockIdx.x] = incl;
    }
}

// One block: group_starts[g] = group_totals[0] + ... + group_totals[g - 1]; group_starts[groups]
// = all entries. Each thread scans a run of consecutive group totals (three barriers in all).
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

// With shared counting, where chunk b's segment of each tile's list begins is first gathered
// into shared memory beside the counters (when both fit: up to SPARSE_EMIT_WORDS / 1.5 tiles),
// so that an entry costs a shared load, a shared atomic and its store: fetched per entry from
// group_starts, local and counts, the loads were what sparse_emit waited on (ncu at d8f500a:
// 28 of its 50 cycles an instruction stalled on them, micro2M at 1024).
constexpr int SPARSE_EMIT_WORDS = 48 * 1024 / 4;
static_assert(SPARSE_SHARED_TILES / 2 <= SPARSE_EMIT_WORDS, "sparse_emit's counters fit its shared words");

extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_x, int tiles,
            int* __restrict__ counts, const int* __restrict__ group_starts, const int* __restrict__ local,
            int* __restrict__ list, int capacity) {
#if SPARSE_SHARED
    __shared__ unsigned words[SPARSE_EMIT_WORDS];
    unsigned* counters = words;
    const int counter_words = (tiles + 1) / 2;
    const bool based = counter_words + tiles <= SPARSE_EMIT_WORDS;
    int* base = (int*)(words + counter_words);            // base[t]: where this chunk's segment of t begins
    const int* offsets = counts + blockIdx.x * tiles;     // ... within t's list
    if (based)
        for (int t = threadIdx.x; t < tiles; t += SPARSE_BIN_THREADS)
            base[t] = list_start(group_starts, local, t) + offsets[t];
    zero_counters(counters, tiles);
    const int end = min(n, (blockIdx.x + 1) * SPARSE_CHUNK);
    for (int i = blockIdx.x * SPARSE_CHUNK + threadIdx.x; i < end; i += SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) {
            const int at = based ? base[t] : list_start(group_starts, local, t) + offsets[t];
            const int pos = at + bump16(counters, t);
            if (pos < capacity) list[pos] = i;
        });
#else
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) {
            const int pos = list_start(group_starts, local, t) + atomicAdd(&counts[t], 1);
            if (pos < capacity) list[pos] = i;
        });
#endif
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

// Where the round from list position lo ends: the last segment boundary within lo + stage,
// or the end of the one segment after lo if that one alone is longer. Segment b of the tile's
// list is [begin + off(b), begin + off(b + 1)), off(b) = offsets[b * tiles] (chunk order),
// off(chunks) = end - begin.
__device__ __forceinline__ int round_end(const int* __restrict__ offsets, int chunks, int tiles, int begin,
                                         int end, int lo, int stage) {
    if (end - lo <= stage) return end;
    auto off = [&](int b) { return b == 0 ? 0 : b >= chunks ? end - begin : offsets[b * tiles]; };
    int a = 0, z = chunks;                 // largest b with off(b) <= lo - begin + stage
    while (a < z) {
        const int m = (a + z + 1) / 2;
        if (off(m) <= lo - begin + stage) a = m; else z = m - 1;
    }
    if (begin + off(a) > lo) return begin + off(a);
    int b = a + 1;                         // no whole segment fits: the next one, alone
    while (begin + off(b) <= lo) ++b;
    return begin + off(b);
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

// Stages list entries [lo, lo + count) (whole segments, count <= SIZE): each circle's record at
// its place in circle order and, with pixel bits, that place's bit in every pixel of the tile
// it covers (the bits are zero: blend_marked leaves them so). Each thread loads the next
// record while it stores the current one.
template <bool SNOW>
__device__ __forceinline__ void stage_round(SparseStage<SNOW>& st, const int* __restrict__ list, int lo, int count,
                                            const float4* __restrict__ records, int x0, int y0, int width,
                                            int height) {
    for (int e = threadIdx.x; e < count; e += SPARSE_THREADS) st.index[e] = list[lo + e];
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
        int n, const int* __restrict__ list, const int* __restrict__ group_starts, const int* __restrict__ local,
        const int* __restrict__ totals, int* __restrict__ counts, int chunks, int capacity,
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
    const int groups = (tiles + SPARSE_GROUP_TILES - 1) / SPARSE_GROUP_TILES;
    const bool cut = group_starts[groups] > capacity;
    const int begin = list_start(group_starts, local, tile), end = begin + totals[tile];
    if (cut) {                             // the lists were cut short (a capacity chosen too small)
        for (int i = 0; i < n; ++i)
            shade_circle<SNOW>(p, circles[i], make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]), px, py);
    }
    // Rounds need no barrier at their end: the blends read no index, which a round writes first
    for (int lo = begin; lo < end && !cut;) {
        const int hi = round_end(counts + tile, chunks, tiles, begin, end, lo, SIZE), count = hi - lo;
        if (count > SIZE) {                // one segment longer than the stage
            blend_in_index_order<SNOW>(p, list, lo, hi, circles, colors, px, py);
        } else {
            stage_round<SNOW>(st, list, lo, count, records, x0, y0, width, height);
            if (SPARSE_BITS) blend_marked<SNOW>(st, count, p, px, py);
            else blend_walked<SNOW>(st, count, p, px, py, rx0, rx1, ry0, ry1);
        }
        lo = hi;
    }
#if !SPARSE_SHARED
    if (threadIdx.x == 0) counts[tile] = 0;        // global counters: zero for the next frame
#endif
    if (inside) image[y * width + x] = p;
    PROFILE_END
}

#define RENDER_SPARSE_PARAMS                                                                   \
    const float4* __restrict__ circles, const float* __restrict__ colors,                     \
    const float4* __restrict__ records, int n,                                                \
    const int* __restrict__ list, const int* __restrict__ group_starts,                       \
    const int* __restrict__ local, const int* __restrict__ totals, int* __restrict__ counts,  \
    int chunks, int capacity, float4* __restrict__ image, const float4* __restrict__ rows,    \
    int cleared, int width, int height
#define RENDER_SPARSE_ARGS circles, colors, records, n, list, group_starts, local, totals, counts, chunks, \
    capacity, image, rows, cleared, width, height

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
render_sparse(RENDER_SPARSE_PARAMS) { render_sparse_body<false>(RENDER_SPARSE_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
render_sparse_snow(RENDER_SPARSE_PARAMS) { render_sparse_body<true>(RENDER_SPARSE_ARGS); }
