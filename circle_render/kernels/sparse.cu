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
// rounds of whole segments (at most SPARSE_STAGE entries: one round for micro2M): it stages
// the round's circles (pack_records' 32-byte records) in shared memory in circle order (each
// segment ranked in place:
// stage_in_order), and each warp walks them in that order, 32 at a time, blending those that
// reach its 8x4 pixels into the pixels they cover, exactly as the serial reference does. A
// segment longer than the stage takes a slower exact route (pixel by pixel, the next circle in
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


// A round's circles: the list entries as loaded (circle indices), then, in circle order, each
// circle (x, y, depth, r) and its colour with its index in w (snow: the index alone).
struct SparseStage {
    int index[SPARSE_STAGE];
    float4 circle[SPARSE_STAGE];
    float4 extra[SPARSE_STAGE];
    int round_end;
};

template <bool SNOW>
__device__ __forceinline__ void shade_circle(float4& p, float4 c, float3 colour, float px, float py) {
    const float d2 = dist2(c, px, py);
    if (d2 > c.w * c.w) return;
    float alpha = FLAT_ALPHA;
    float3 col = colour;
    if (SNOW) snow_shade(d2, c, alpha, col);
    blend(p, alpha, col);
}

// A staged flat circle (x, y, r^2, r) with alpha * colour in ex, blended into p if it covers
// (px, py): the reference's blend, alpha * colour + (1 - alpha) * p, with both products exact.
__device__ __forceinline__ void blend_flat(float4& p, float4 c, float4 ex, float px, float py) {
    if (dist2(c, px, py) <= c.z) {
        p.x = fmaf(1.f - FLAT_ALPHA, p.x, ex.x);
        p.y = fmaf(1.f - FLAT_ALPHA, p.y, ex.y);
        p.z = fmaf(1.f - FLAT_ALPHA, p.z, ex.z);
        p.w += FLAT_ALPHA;
    }
}

// Which segment of a tile's list circle i belongs to: its chunk (shared counting), or the one
// segment of the whole list (global atomics).
__device__ __forceinline__ int segment_of(int i) { return SPARSE_SHARED ? (int)((unsigned)i / SPARSE_CHUNK) : 0; }

// Where the round from list position lo ends: the last segment boundary within lo + SPARSE_STAGE,
// or the end of the one segment after lo if that one alone is longer. Segment b of the tile's
// list is [begin + off(b), begin + off(b + 1)), off(b) = offsets[b * tiles] (chunk order),
// off(chunks) = end - begin.
__device__ __forceinline__ int round_end(const int* __restrict__ offsets, int chunks, int tiles, int begin,
                                         int end, int lo) {
    if (end - lo <= SPARSE_STAGE) return end;
    auto off = [&](int b) { return b == 0 ? 0 : b >= chunks ? end - begin : offsets[b * tiles]; };
    int a = 0, z = chunks;                 // largest b with off(b) <= lo - begin + SPARSE_STAGE
    while (a < z) {
        const int m = (a + z + 1) / 2;
        if (off(m) <= lo - begin + SPARSE_STAGE) a = m; else z = m - 1;
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

// Stages list entries [lo, lo + count) (whole segments) in circle order: each entry's place is
// its segment's start plus the entries of its segment with smaller indices (segments are short:
// micro2M's hold 2 to 3 circles at 1024 pixels; with global counting a tile's whole list, 70).
template <bool SNOW>
__device__ __forceinline__ void stage_in_order(SparseStage& st, const int* __restrict__ list, int lo, int count,
                                               const float4* __restrict__ records) {
    for (int e = threadIdx.x; e < count; e += SPARSE_THREADS) st.index[e] = list[lo + e];
    __syncthreads();
    for (int e = threadIdx.x; e < count; e += SPARSE_THREADS) {
        const int i = st.index[e], s = segment_of(i);
        int a = e, z = e + 1;             // the segment: the whole round with global counting
        if (!SPARSE_SHARED) a = 0, z = count;
        while (a > 0 && segment_of(st.index[a - 1]) == s) --a;
        while (z < count && segment_of(st.index[z]) == s) ++z;
        int place = a;
        for (int k = a; k < z; ++k) place += st.index[k] < i;
        const float4 c = records[2 * i], col = records[2 * i + 1];
        // flat: r^2 as the reference rounds it and alpha * colour (exact: alpha is 1/2), so a
        // hit costs its distance, a compare and 4 fused operations (blend_flat)
        st.circle[place] = SNOW ? c : make_float4(c.x, c.y, __fmul_rn(c.w, c.w), c.w);
        st.extra[place] = SNOW ? make_float4(col.x, col.y, col.z, __int_as_float(i))
                               : make_float4(FLAT_ALPHA * col.x, FLAT_ALPHA * col.y, FLAT_ALPHA * col.z,
                                             __int_as_float(i));
    }
    __syncthreads();
}

// Each warp draws a SPARSE_SUB_W x SPARSE_SUB_H block of the tile, a pixel a lane: squarer
// than a row strip, so fewer staged circles reach it.
constexpr int SPARSE_SUB_W = 8, SPARSE_SUB_H = 32 / SPARSE_SUB_W;
static_assert(SPARSE_TILE % SPARSE_SUB_W == 0 && SPARSE_TILE % SPARSE_SUB_H == 0, "sub-tiles split the tile");

template <bool SNOW>
__device__ __forceinline__ void render_sparse_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, const float4* __restrict__ records,
        int n, const int* __restrict__ list, const int* __restrict__ group_starts, const int* __restrict__ local,
        const int* __restrict__ totals, int* __restrict__ counts, int chunks, int capacity,
        float4* __restrict__ image, const float4* __restrict__ rows, int cleared, int width, int height) {
    PROFILE_START
    __shared__ SparseStage st;
    static_assert(sizeof(SparseStage) <= 48 * 1024, "render_sparse's stage fits 48 KB: a smaller SPARSE_STAGE");
    const int2 t = tile_of_block();
    const int tiles = gridDim.x * gridDim.y, tile = t.y * gridDim.x + t.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int sub_x = t.x * SPARSE_TILE + warp % (SPARSE_TILE / SPARSE_SUB_W) * SPARSE_SUB_W;
    const int sub_y = t.y * SPARSE_TILE + warp / (SPARSE_TILE / SPARSE_SUB_W) * SPARSE_SUB_H;
    const int x = sub_x + lane % SPARSE_SUB_W, y = sub_y + lane / SPARSE_SUB_W;
    const bool inside = x < width && y < height;
    const float px = pixel_centre(x, width), py = pixel_centre(y, height);
    // the warp's pixel centres span [rx0, rx1] x [ry0, ry1]
    const float rx0 = pixel_centre(sub_x, width), rx1 = pixel_centre(sub_x + SPARSE_SUB_W - 1, width);
    const float ry0 = pixel_centre(sub_y, height), ry1 = pixel_centre(sub_y + SPARSE_SUB_H - 1, height);
    float4 p = inside ? (cleared ? rows[y] : image[y * width + x]) : make_float4(0.f, 0.f, 0.f, 0.f);
    const int groups = (tiles + SPARSE_GROUP_TILES - 1) / SPARSE_GROUP_TILES;
    const bool cut = group_starts[groups] > capacity;
    const int begin = list_start(group_starts, local, tile), end = begin + totals[tile];
    if (cut) {                             // the lists were cut short (a capacity chosen too small)
        for (int i = 0; i < n; ++i)
            shade_circle<SNOW>(p, circles[i], make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]), px, py);
    }
    for (int lo = begin; lo < end && !cut;) {
        if (threadIdx.x == 0) st.round_end = round_end(counts + tile, chunks, tiles, begin, end, lo);
        __syncthreads();
        const int hi = st.round_end, count = hi - lo;
        if (count > SPARSE_STAGE) {        // one segment longer than the stage
            blend_in_index_order<SNOW>(p, list, lo, hi, circles, colors, px, py);
        } else {
            stage_in_order<SNOW>(st, list, lo, count, records);
            // the warp's circles in order, 32 at a time: those that reach its sub-tile, each
            // blended into the pixels it covers, one after the other (the serial order)
            for (int j0 = 0; j0 < count; j0 += 32) {
                const int e = j0 + lane;
                const bool near = e < count && reaches(st.circle[e], rx0, rx1, ry0, ry1);
                for (unsigned mask = __ballot_sync(FULL, near); mask; mask &= mask - 1) {
                    const int k = j0 + __ffs(mask) - 1;
                    if (SNOW) {
                        const float4 ex = st.extra[k];
                        shade_circle<SNOW>(p, st.circle[k], make_float3(ex.x, ex.y, ex.z), px, py);
                    } else {
                        blend_flat(p, st.circle[k], st.extra[k], px, py);
                    }
                }
            }
        }
        __syncthreads();                           // the stage is reused by the next round
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
