// The fast renderer's binning stage ("bin"; cuda/binned.py, BinnedPath.bin): every circle is listed
// under each supertile (one of SUPER_GRID x SUPER_GRID, each tiles_per_super tiles a side, a power
// of two) its pixel box touches, in circle order, as an "entry": its index and its box in tiles,
// clamped to the supertile and packed into 32 bits. bin_count counts per (chunk of circles,
// supertile) in shared memory, bin_scan scans each supertile's counts over the chunks, bin_emit
// writes the entries and starts[s], where list s begins (the lists lie end to end;
// starts[SUPERTILES] is their total).
//
// Order. Block b takes a chunk of circles and warp w of it a run of consecutive ones, 32 at a
// time, so an entry's place in its list is: the list's start, the entries of earlier chunks
// (bin_scan; counts[b * SUPERTILES + s] is chunk b's in list s), of the chunk's earlier warps
// (bin_count) and of the warp's earlier groups (bin_emit keeps count), and the lower lanes of
// its group in the same supertile. For the
// last, the warp takes its group's supertiles in "slots": slot (px, py) holds the supertiles
// with sx % mx == px and sy % my == py, mx and my the powers of two that hold the widest and
// the tallest range of supertiles a lane's circle touches, so each circle has at most one
// supertile a slot and every lane touching supertile s meets it in the same slot:
// __match_any_sync gives them all, and a lane's place is the number of lower lanes among them.
// Circles that touch at most 2 x 2 supertiles take 4 slots.
// NumPy twins: circle_render/twins/bin.py.
//
// Each step is one body (count_supertiles, scan_counts, emit_entries) behind two entry points:
// the "bin" stage's (bin_count, bin_scan, bin_emit) and the "bin_back" stage's (bin_back_count,
// bin_back_scan, bin_back_emit) of the binned path with a front layer, which bins every circle
// again only when the front layer left a tile unfinished: they return at once when *gate (the
// count of deferred tiles, kernels/draw.cu's draw_front) is 0.
#include "tiles.cuh"
#include "scan.cuh"

static_assert(SUPER_GRID <= MAX_SUPER_GRID, "bin_emit keeps a counter per warp and supertile in shared memory");
static_assert(BIN_THREADS * BIN_MAX_ITEMS <= 65536, "bin_count's warp offsets within a chunk fit 16 bits");

// Inclusive supertile range of a tile box (x0 > x1 when it touches none); supertiles are
// 1 << shift tiles a side.
struct SuperRange { int x0, x1, y0, y1; };

__device__ __forceinline__ SuperRange super_range(TileBox b, int shift) {
    if (b.x0 > b.x1) return {1, 0, 1, 0};
    return {b.x0 >> shift, b.x1 >> shift, b.y0 >> shift, b.y1 >> shift};
}

// Adds one to counters[s] for every supertile s of the range (shared atomics). Ranges are
// short (rand1M: 1 or 2 a side), so the loops are not unrolled.
__device__ __forceinline__ void count_range(int* counters, SuperRange r) {
#pragma unroll 1
    for (int sy = r.y0; sy <= r.y1; ++sy)
#pragma unroll 1
        for (int sx = r.x0; sx <= r.x1; ++sx) atomicAdd(&counters[sy * SUPER_GRID + sx], 1);
}

// The lane's circle of the first group of 32 from `first` (kernels load it first of all, so
// that its trip to memory overlaps their set-up).
__device__ __forceinline__ float4 first_circle(const float4* __restrict__ circles, int n, int first) {
    const int i = first + (int)(threadIdx.x & 31);
    return i < n ? circles[i] : make_float4(0.f, 0.f, 0.f, 0.f);
}

// Walks a warp's `items` groups of 32 circles from `first` (`next`: first_circle's), loading
// the next group while the current one is binned; calls visit(index, tile box) with the lane's
// circle of each group (every lane calls it the same number of times: past n, with an empty box).
template <class Visit>
__device__ __forceinline__ void for_each_circle_group(const float4* __restrict__ circles, int n, int first,
                                                      int items, int width, int height, float4 next,
                                                      Visit visit) {
    const int lane = threadIdx.x & 31;
    for (int it = 0; it < items && first + it * 32 < n; ++it) {
        const int i = first + it * 32 + lane;
        const float4 c = next;
        if (it + 1 < items && i + 32 < n) next = circles[i + 32];
        visit(i, i < n ? tile_box(c, width, height, FAST_TILE) : TileBox{1, 0, 1, 0});
    }
}

// Block b handles circles [b * chunk, (b + 1) * chunk), chunk = BIN_THREADS * items, warp w
// of it 32 * items of them, and writes counts[b * SUPERTILES + s], its circles touching supertile
// s, and warp_offsets[(b * BIN_WARPS + w) * SUPERTILES + s], those of its warps before w
// (16 bits: a chunk holds at most BIN_THREADS * BIN_MAX_ITEMS circles).
__device__ __forceinline__ void count_supertiles(const float4* __restrict__ circles, int n, int width, int height,
                                                 int tiles_per_super, int items, int* __restrict__ counts,
                                                 unsigned short* __restrict__ warp_offsets) {
    __shared__ int per_warp[BIN_WARPS][SUPERTILES];
    const int warp = threadIdx.x >> 5, shift = __ffs(tiles_per_super) - 1;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    const float4 c0 = first_circle(circles, n, first);
    for (int k = threadIdx.x; k < BIN_WARPS * SUPERTILES; k += BIN_THREADS) per_warp[k / SUPERTILES][k % SUPERTILES] = 0;
    __syncthreads();
    for_each_circle_group(circles, n, first, items, width, height, c0,
                          [&](int, TileBox b) { count_range(per_warp[warp], super_range(b, shift)); });
    __syncthreads();
    unsigned short* out = warp_offsets + blockIdx.x * BIN_WARPS * SUPERTILES;
    for (int s = threadIdx.x; s < SUPERTILES; s += BIN_THREADS) {
        int sum = 0;
        for (int w = 0; w < BIN_WARPS; ++w) {
            out[w * SUPERTILES + s] = (unsigned short)sum;
            sum += per_warp[w][s];
        }
        counts[blockIdx.x * SUPERTILES + s] = sum;
    }
}

// Block g: supertiles [32g, 32g + 32), a lane each, so that every read and write of counts is
// a whole row of 32; warp w takes a run of consecutive chunks. Supertile s's counts over the
// chunks become their exclusive prefix sum (where chunk b's entries of list s begin within the
// list) and totals[s] their sum, the length of the list: each lane sums its run (loaded at once
// when it is short), the runs' sums are scanned across the warps in shared memory, each lane
// writes its run's prefixes.
constexpr int SCAN_WARPS = SCAN_BLOCK / 32;
__device__ __forceinline__ void scan_counts(int* __restrict__ counts, int chunks, int* __restrict__ totals) {
    __shared__ int run_sums[SCAN_WARPS][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int s = blockIdx.x * 32 + lane;
    const int per = (chunks + SCAN_WARPS - 1) / SCAN_WARPS, lo = min(chunks, warp * per), hi = min(chunks, lo + per);
    constexpr int HELD = 32;                   // a run this short is loaded at once and kept
    int held[HELD];
    int sum = 0;
    if (s < SUPERTILES && per <= HELD) {
#pragma unroll
        for (int k = 0; k < HELD; ++k) held[k] = lo + k < hi ? counts[(lo + k) * SUPERTILES + s] : 0;
#pragma unroll
        for (int k = 0; k < HELD; ++k) sum += held[k];
    } else if (s < SUPERTILES) {
#pragma unroll 4
        for (int b = lo; b < hi; ++b) sum += counts[b * SUPERTILES + s];
    }
    run_sums[warp][lane] = sum;
    __syncthreads();
    int before = 0;
    for (int w = 0; w < warp; ++w) before += run_sums[w][lane];
    if (s >= SUPERTILES) return;
    if (warp == SCAN_WARPS - 1) totals[s] = before + sum;
    if (per <= HELD) {
#pragma unroll
        for (int k = 0; k < HELD; ++k) {
            if (lo + k < hi) counts[(lo + k) * SUPERTILES + s] = before;
            before += held[k];
        }
        return;
    }
#pragma unroll 4
    for (int b = lo; b < hi; ++b) {
        const int c = counts[b * SUPERTILES + s];
        counts[b * SUPERTILES + s] = before;
        before += c;
    }
}

// Each entry at its place in its list (see the top of this file): the block scans the list
// lengths into their starts (block 0 writes them to `starts`), and next[w][s] becomes where warp
// w's first entry in list s goes. Writes past capacity are dropped (render_fast then walks every
// circle instead).
__device__ __forceinline__ void emit_entries(const float4* __restrict__ circles, int n, int width, int height,
                                             int tiles_per_super, int items, const int* __restrict__ chunk_offsets,
                                             const int* __restrict__ totals,
                                             const unsigned short* __restrict__ warp_offsets, uint2* __restrict__ list,
                                             int* __restrict__ starts, int capacity) {
    __shared__ int chunk_at[SUPERTILES];               // where the block's first entry in list s goes
    __shared__ int next[BIN_WARPS][SUPERTILES];
    __shared__ int warp_sums[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned lower = (1u << lane) - 1u;
    const int shift = __ffs(tiles_per_super) - 1;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    const float4 c0 = first_circle(circles, n, first);
    const int all = block_exclusive_scan_n<BIN_THREADS>(
        SUPERTILES, [&](int s) { return totals[s]; }, [&](int s, int before) {
            if (blockIdx.x == 0) starts[s] = before;
            chunk_at[s] = before + chunk_offsets[blockIdx.x * SUPERTILES + s];
        }, warp_sums);
    if (blockIdx.x == 0 && threadIdx.x == 0) starts[SUPERTILES] = all;
    __syncthreads();
    const unsigned short* mine = warp_offsets + (blockIdx.x * BIN_WARPS + warp) * SUPERTILES;
    for (int s = lane; s < SUPERTILES; s += 32) next[warp][s] = chunk_at[s] + mine[s];
    __syncwarp();
    for_each_circle_group(circles, n, first, items, width, height, c0, [&](int i, TileBox b) {
        const SuperRange r = super_range(b, shift);
        const bool live = r.x0 <= r.x1;
        const int span_x = (int)__reduce_max_sync(FULL, live ? (unsigned)(r.x1 - r.x0) : 0u);
        const int span_y = (int)__reduce_max_sync(FULL, live ? (unsigned)(r.y1 - r.y0) : 0u);
        if (!__any_sync(FULL, live)) return;
        const int mx = 1 << (32 - __clz(span_x)), my = 1 << (32 - __clz(span_y));   // powers of two
        const int x0m = r.x0 & (mx - 1), y0m = r.y0 & (my - 1);
        for (int py = 0; py < my; ++py) {
            const int sy = r.y0 + ((py - y0m) & (my - 1));               // this lane's in slot row py
            for (int px = 0; px < mx; ++px) {
                const int sx = r.x0 + ((px - x0m) & (mx - 1));
                const bool here = live && sx <= r.x1 && sy <= r.y1;
                const int s = here ? sy * SUPER_GRID + sx : -1;
                const unsigned peers = __match_any_sync(FULL, s);
                if (here) {
                    const int pos = next[warp][s] + __popc(peers & lower);
                    if (pos < capacity)
                        list[pos] = make_uint2((unsigned)i, pack_in_cell(b, sx << shift, sy << shift, tiles_per_super));
                }
                __syncwarp();
                if (here && lane == 31 - __clz(peers)) next[warp][s] += __popc(peers);
                __syncwarp();
            }
        }
    });
}

// ---- the entry points: the "bin" stage, and the gated "bin_back" stage ----

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_count(const float4* __restrict__ circles,            // (n,) x, y, z, r
          int n, int width, int height,
          int tiles_per_super,                           // supertile side in tiles, a power of two
          int items,                                     // circles a thread
          int* __restrict__ counts,                      // (chunks, SUPERTILES) out
          unsigned short* __restrict__ warp_offsets) {   // (chunks, BIN_WARPS, SUPERTILES) out
    count_supertiles(circles, n, width, height, tiles_per_super, items, counts, warp_offsets);
}

extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
bin_scan(int* __restrict__ counts,                       // (chunks, SUPERTILES) scanned in place
         int chunks,
         int* __restrict__ totals) {                     // (SUPERTILES,) out: list lengths
    scan_counts(counts, chunks, totals);
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_emit(const float4* __restrict__ circles,             // (n,) x, y, z, r
         int n, int width, int height, int tiles_per_super, int items,
         const int* __restrict__ chunk_offsets,          // (chunks, SUPERTILES): bin_scan's counts
         const int* __restrict__ totals,                 // (SUPERTILES,)
         const unsigned short* __restrict__ warp_offsets,   // (chunks, BIN_WARPS, SUPERTILES)
         uint2* __restrict__ list,                       // (capacity,) out: (circle index, packed tile box)
         int* __restrict__ starts,                       // (SUPERTILES + 1,) out
         int capacity) {
    emit_entries(circles, n, width, height, tiles_per_super, items, chunk_offsets, totals, warp_offsets, list, starts,
                 capacity);
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_back_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super, int items,
               int* __restrict__ counts, unsigned short* __restrict__ warp_offsets,
               const int* __restrict__ gate) {           // (>= 1,): the deferred tiles' count
    if (*gate == 0) return;
    count_supertiles(circles, n, width, height, tiles_per_super, items, counts, warp_offsets);
}

extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
bin_back_scan(int* __restrict__ counts, int chunks, int* __restrict__ totals, const int* __restrict__ gate) {
    if (*gate == 0) return;
    scan_counts(counts, chunks, totals);
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_back_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super, int items,
              const int* __restrict__ chunk_offsets, const int* __restrict__ totals,
              const unsigned short* __restrict__ warp_offsets, uint2* __restrict__ list, int* __restrict__ starts,
              int capacity, const int* __restrict__ gate) {
    if (*gate == 0) return;
    emit_entries(circles, n, width, height, tiles_per_super, items, chunk_offsets, totals, warp_offsets, list, starts,
                 capacity);
}
