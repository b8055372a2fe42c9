// The sparse path's binning stage ("sparse_bin"; cuda/sparse.py, SparsePath.sparse_bin): scenes
// with few circles over any pixel (micro2M). Every circle is listed under each tile
// (SPARSE_TILE pixels a side) its pixel box touches, chunk by chunk; sparse_lists.cuh says how
// the lists lie. NumPy twins: circle_render/twins/sparse_bin.py.
//
// Shared counting (SparseSegments: up to SPARSE_SHARED_TILES tiles, images of up to 2048 pixels
// a side): one kernel, sparse_bin_shared, a block a chunk of SPARSE_CHUNK circles. It counts each
// tile's circles of the chunk in shared memory (16-bit counters, two a word; no global
// atomics), scans the counts over the tiles into the chunk's row of offsets, places each entry
// at its tile's offset plus its rank (in no order within a segment) in shared memory, and writes
// the chunk's entries out whole: coalesced (written one by one, each entry is an L2 request of
// its own). Where its chunk begins, a block learns from the totals the chunks before it publish.
// Global counting (SparseTileLists: more tiles, whose counters do not fit in shared memory), four
// kernels: sparse_bin_count (global atomics), sparse_bin_scan_tiles (the tile counts scanned
// within groups of SPARSE_GROUP_TILES tiles), sparse_bin_scan_groups (the groups' totals scanned),
// sparse_bin_emit (each entry at its list's start plus its rank, from global atomics again);
// sparse_draw_global zeroes the counters for the next frame.
// sparse_pack (its own stage, "sparse_pack") packs each circle and its colour for the draw.
#include "sparse_lists.cuh"
#include "scan.cuh"

constexpr int SCAN_WARPS = BIN_THREADS / 32;
static_assert(SPARSE_CHUNK <= 65535, "a chunk's circles in one tile are counted in 16 bits");
static_assert(SPARSE_GROUP_TILES == 32, "sparse_bin_scan_tiles: a lane a tile");

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
// The counter of tile t among the block's 16-bit counters.
__device__ __forceinline__ int counter16(const unsigned* counters, int t) {
    return (int)(counters[t >> 1] >> (16 * (t & 1)) & 0xffffu);
}

// Shared counting: the sum of chunks [0, b)'s entries, each chunk's as published in chunk_status[j]
// (the frame's number above, its total below), waiting for those not yet published. A chunk
// publishes before it waits, and chunks before b started before it (tickets), so this ends.
// Every thread must call it.
__device__ __forceinline__ int entries_before(const unsigned long long* chunk_status, int b, unsigned frame,
                                              int* warp_sums) {
    int sum = 0;
    for (int j = threadIdx.x; j < b; j += SPARSE_BIN_THREADS) {
        unsigned long long v;
        do v = *(volatile const unsigned long long*)&chunk_status[j]; while ((unsigned)(v >> 32) != frame);
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
// `held` entries), learns where the chunk begins (chunk_starts[b]: the totals of the chunks before it)
// and writes its entries out whole, coalesced. A chunk of more than `held` entries writes them
// one by one. Entries from `capacity` on are dropped. ticket counts blocks over all frames.
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS, 2)
sparse_bin_shared(const float4* __restrict__ circles,            // (n,) x, y, z, r
                  int n, int width, int height,
                  int tiles_x,                                   // tiles across
                  int tiles,                                     // tiles in all
                  int chunks,                                    // chunks of SPARSE_CHUNK circles
                  int* __restrict__ offsets,                     // (chunks, tiles + 1) out
                  int* __restrict__ chunk_starts,                // (chunks + 1,) out
                  unsigned long long* __restrict__ ticket,       // (1,) blocks taken, over all frames
                  unsigned long long* __restrict__ chunk_status, // (chunks,) (frame, total) published
                  int* __restrict__ list,                        // (capacity,) out: circle indices
                  int capacity,
                  int held) {                                    // entries the shared memory holds
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
        atomicExch(&chunk_status[b], (unsigned long long)frame << 32 | (unsigned)count);
    }
    zero_counters(counters, tiles);
    const bool whole = count <= held;          // the same for every thread
    const int base = whole ? 0 : entries_before(chunk_status, b, frame, warp_sums);
    for (int i = first + threadIdx.x; i < end; i += SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) {
            const int j = row[t] + bump16(counters, t);
            if (whole) entries[j] = i;
            else if (base + j < capacity) list[base + j] = i;
        });
    const int at = whole ? entries_before(chunk_status, b, frame, warp_sums) : base;   // has a barrier
    if (threadIdx.x == 0) {
        chunk_starts[b] = at;
        if (b == chunks - 1) chunk_starts[chunks] = at + count;
    }
    if (whole)
        for (int j = threadIdx.x; j < count && at + j < capacity; j += SPARSE_BIN_THREADS) list[at + j] = entries[j];
}

// Global counting: counts[t] += circles touching tile t.
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_bin_count(const float4* __restrict__ circles,   // (n,) x, y, z, r
                 int n, int width, int height,
                 int tiles_x,                          // tiles across
                 int* __restrict__ counts) {           // (tiles,) added to
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x,
                      [&](int t) { atomicAdd(&counts[t], 1); });
}

// Global counting, the tile counts scanned within each group of SPARSE_GROUP_TILES tiles.
// Warp g of all: tiles [32g, 32g + 32), a lane each: local[t] = the counts of
// the group's tiles before t, totals[t] = counts[t] (which becomes 0: sparse_bin_emit counts ranks
// from it), group_totals[g] = the group's sum.
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
sparse_bin_scan_tiles(int* __restrict__ counts,         // (tiles,) read, then zeroed
                      int tiles,
                      int* __restrict__ totals,         // (tiles,) out: list lengths
                      int* __restrict__ local,          // (tiles,) out: start within the group
                      int* __restrict__ group_totals) { // (groups,) out
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

// Global counting, the groups' totals scanned, one block:
// group_starts[g] = group_totals[0] + ... + group_totals[g - 1];
// group_starts[groups] = all entries. Each thread scans a run of consecutive group totals
// (three barriers in all).
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
sparse_bin_scan_groups(const int* __restrict__ group_totals,  // (groups,)
                       int groups,
                       int* __restrict__ group_starts) {     // (groups + 1,) out
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
// (from 0: sparse_bin_scan_tiles).
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_bin_emit(const float4* __restrict__ circles,        // (n,) x, y, z, r
                int n, int width, int height,
                int tiles_x,                                // tiles across
                int* __restrict__ counts,                   // (tiles,) ranks counted from 0
                const int* __restrict__ group_starts,       // (groups + 1,)
                const int* __restrict__ local,              // (tiles,)
                int* __restrict__ list,                     // (capacity,) out: circle indices
                int capacity) {
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS)
        for_each_tile(tile_box(circles[i], width, height, SPARSE_TILE), tiles_x, [&](int t) {
            const int pos = list_start(group_starts, local, t) + atomicAdd(&counts[t], 1);
            if (pos < capacity) list[pos] = i;
        });
}

// records[2i] = circle i (x, y, z, r), records[2i + 1] = its colour (r, g, b, 0): one aligned
// 32-byte sector a circle, so sparse_draw's gathers (each tile its circles, in random order
// from DRAM) read one sector an entry instead of two or three. Run once at load for still
// scenes, every frame (before the lists) for animated ones.
extern "C" __global__ void __launch_bounds__(SPARSE_BIN_THREADS)
sparse_pack(const float4* __restrict__ circles,   // (n,) x, y, z, r
            const float* __restrict__ colors,     // (n, 3)
            int n,
            float4* __restrict__ records) {       // (n, 2) out: circle, colour (r, g, b, 0)
    for (int i = blockIdx.x * SPARSE_BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * SPARSE_BIN_THREADS) {
        records[2 * i] = circles[i];
        records[2 * i + 1] = make_float4(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2], 0.f);
    }
}
