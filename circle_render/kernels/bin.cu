// The fast renderer's binning stage ("bin"): every circle is listed under each supertile
// (one of SUPER_GRID x SUPER_GRID) its pixel box touches, in circle order, as an "entry": its
// index and its box in tiles packed into 32 bits. bin_count counts per (chunk of circles,
// supertile), bin_scan scans each supertile's row of counts, bin_emit writes. Each warp ranks
// its 32 circles with ballots, so the lists come out ordered without a sort.
// NumPy twins: circle_render/twins/bin.py.
#include "tiles.cuh"
#include "scan.cuh"

constexpr int LANE_SLOTS = (SUPERTILES + 31) / 32;   // per-supertile counters each lane holds

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
