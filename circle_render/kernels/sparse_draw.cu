// The sparse path's draw stage ("sparse_draw"; cuda/sparse.py, SparsePath.sparse_draw): one block
// per tile, one pixel per thread; one body (draw_sparse_tile) behind an entry point per list
// layout, sparse_draw_shared and sparse_draw_global (sparse_lists.cuh). Every pixel's circles are
// few, so circle order is restored per tile in shared memory rather than walked from a sorted
// list. NumPy twins: circle_render/twins/sparse_draw.py.
//
// A block finds its tile's segments (sparse_lists.cuh) a thread a segment (SPARSE_THREADS at a
// time: a window) and takes them in rounds of whole segments (at most SPARSE_STAGE entries: one
// round for micro2M at 1024). A round is staged in shared memory (stage_round): each entry's
// place in circle order is found by ranking it within its segment, and its record (sparse_pack's
// 32 bytes) is stored at that place. Then, in one of two ways (SPARSE_BITS, the plan's choice by
// the circles' size), every pixel blends the circles that cover it in that order, exactly as the
// serial reference does:
// - pixel bits (small circles): while staging, each circle sets the bit of its place in every
//   pixel of the tile it covers (a bit mask a pixel; shared atomicOr); each thread then blends
//   its pixel's circles from its bits, low to high (blend_marked);
// - the warp walk (larger circles): each warp takes the staged circles 32 at a time and blends
//   those that reach its 8x4 pixels, one after the other (blend_walked).
// A segment longer than the stage takes a slower exact route (pixel by pixel, the next circle in
// index order); lists cut short by too small a capacity walk every circle.
#include "sparse_lists.cuh"
#include "scan.cuh"

constexpr int SPARSE_THREADS = SPARSE_TILE * SPARSE_TILE;     // a pixel a thread
static_assert(SPARSE_THREADS == BLOCK_THREADS, "the sparse draw is one pixel per thread of a block");

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
template <bool CHUNKED>
__device__ __forceinline__ int place_in_order(const int* index, int e, int count) {
    const int i = index[e], s = segment_of<CHUNKED>(i);
    int a = e, z = e + 1;
    if (!CHUNKED) a = 0, z = count;
    while (a > 0 && segment_of<CHUNKED>(index[a - 1]) == s) --a;
    while (z < count && segment_of<CHUNKED>(index[z]) == s) ++z;
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
template <bool SNOW, bool CHUNKED>
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
        const int place = place_in_order<CHUNKED>(st.index, e, count);
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

// Every tile of the image (a block each, a pixel a thread) from its list (Lists: SparseSegments or
// SparseTileLists); see the top of the file.
template <bool SNOW, class Lists>
__device__ __forceinline__ void draw_sparse_tile(
        const Lists lists, const float4* __restrict__ circles, const float* __restrict__ colors,
        const float4* __restrict__ records, int n, const int* __restrict__ list, int capacity,
        float4* __restrict__ image, const float4* __restrict__ rows, int cleared, int width, int height) {
    __shared__ SparseStage<SNOW> st;
    static_assert(sizeof(SparseStage<SNOW>) <= 48 * 1024, "the sparse draw's stage fits 48 KB: a smaller SPARSE_STAGE");
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
    const bool cut = lists.entries() > capacity;
    if (cut) {                             // the lists were cut short (a capacity chosen too small)
        for (int i = 0; i < n; ++i)
            shade_circle<SNOW>(p, circles[i], make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]), px, py);
    }
    auto draw_round = [&](int count) {     // the round's entries are in st.index (barrier to come)
        stage_round<SNOW, Lists::CHUNKED>(st, count, records, x0, y0, width, height);
        if (SPARSE_BITS) blend_marked<SNOW>(st, count, p, px, py);
        else blend_walked<SNOW>(st, count, p, px, py, rx0, rx1, ry0, ry1);
    };
    if constexpr (Lists::CHUNKED) {
        // Windows of SPARSE_THREADS segments, a thread a segment; each window's entries are placed
        // end to end (at: where this thread's segment begins) and drawn in rounds of whole segments
        // (one, when the window fits the stage: micro2M at 1024). Rounds need no barrier at their
        // end: the blends read no index, which a round writes first.
        for (int w0 = 0; w0 < lists.chunks && !cut; w0 += SPARSE_THREADS) {
            const int b = w0 + (int)threadIdx.x;
            const int2 segment = b < lists.chunks ? lists.segment(tiles, b, tile) : make_int2(0, 0);
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
    } else {
        // One list, the tile's: one round, or the slow route when it is longer than the stage.
        const int begin = list_start(lists.group_starts, lists.local, tile), count = lists.totals[tile];
        if (count > SIZE && !cut) {
            blend_in_index_order<SNOW>(p, list, begin, begin + count, circles, colors, px, py);
        } else if (!cut) {
            for (int e = threadIdx.x; e < count; e += SPARSE_THREADS) st.index[e] = list[begin + e];
            draw_round(count);
        }
        if (threadIdx.x == 0) lists.counters[tile] = 0;      // zero for the next frame
    }
    if (inside) image[y * width + x] = p;
}

constexpr bool SNOW = SNOW_SCENE != 0;

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
sparse_draw_shared(const float4* __restrict__ circles,      // (n,) x, y, z, r: the slow routes
                   const float* __restrict__ colors,        // (n, 3): the slow routes
                   const float4* __restrict__ records,      // (n, 2): circle, colour (sparse_pack)
                   int n,
                   const int* __restrict__ list,            // (capacity,) circle indices
                   const int* __restrict__ offsets,         // (chunks, tiles + 1)
                   const int* __restrict__ chunk_starts,    // (chunks + 1,)
                   int chunks,                              // chunks of SPARSE_CHUNK circles
                   int capacity,                            // entries the list holds
                   float4* __restrict__ image,              // (height, width) RGBA
                   const float4* __restrict__ rows,         // (height,) each row's clear colour
                   int cleared,                             // 1: start from rows, not image
                   int width, int height) {
    draw_sparse_tile<SNOW>(SparseSegments{offsets, chunk_starts, chunks}, circles, colors, records, n, list, capacity,
                           image, rows, cleared, width, height);
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SPARSE_MIN_BLOCKS)
sparse_draw_global(const float4* __restrict__ circles,      // (n,) x, y, z, r: the slow routes
                   const float* __restrict__ colors,        // (n, 3): the slow routes
                   const float4* __restrict__ records,      // (n, 2): circle, colour (sparse_pack)
                   int n,
                   const int* __restrict__ list,            // (capacity,) circle indices
                   int* __restrict__ counters,              // (tiles,) zeroed here
                   const int* __restrict__ group_starts,    // (groups + 1,)
                   const int* __restrict__ local,           // (tiles,)
                   const int* __restrict__ totals,          // (tiles,) list lengths
                   int capacity,                            // entries the list holds
                   float4* __restrict__ image,              // (height, width) RGBA
                   const float4* __restrict__ rows,         // (height,) each row's clear colour
                   int cleared,                             // 1: start from rows, not image
                   int width, int height) {
    const int groups = (gridDim.x * gridDim.y + SPARSE_GROUP_TILES - 1) / SPARSE_GROUP_TILES;
    draw_sparse_tile<SNOW>(SparseTileLists{counters, group_starts, local, totals, groups}, circles, colors, records, n,
                           list, capacity, image, rows, cleared, width, height);
}
