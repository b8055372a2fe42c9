// The fast renderer's binning stage ("bin"): every circle is listed under each supertile (one of
// SUPER_GRID x SUPER_GRID, each tiles_per_super tiles a side) its pixel box touches, in circle
// order, as an "entry": its index and its box in tiles, clamped to the supertile and packed into
// 32 bits. bin_count counts per (chunk of circles, supertile), bin_scan scans each supertile's
// row of counts, bin_emit writes.
//
// Order within a warp's 32 circles comes from their lanes: each lane holds the set of
// supertiles its circle touches as bits of a 64-bit mask (bit sy * 8 + sx); a 32 x 32 bit
// transpose across the warp (twice) gives lane l the set of lanes touching supertile bit l and
// bit l + 32, so a circle's place in a list is the number of lower lanes in that set: no sort,
// and no loop over every supertile. NumPy twins: circle_render/twins/bin.py.
//
// Every kernel returns at once when *gate is 0: the back layer of a deep flat scene is binned
// only when its front layer left a tile unfinished (kernels/draw.cu, DRAW_BACK).
#include "tiles.cuh"
#include "scan.cuh"

static_assert(SUPER_GRID <= 8, "supertiles are bits of a 64-bit mask, 8 a row");

// Inclusive supertile range of a tile box (x0 > x1 when it touches none).
struct SuperRange { int x0, x1, y0, y1; };

__device__ __forceinline__ SuperRange super_range(TileBox b, int tiles_per_super) {
    if (b.x0 > b.x1) return {1, 0, 1, 0};
    return {b.x0 / tiles_per_super, b.x1 / tiles_per_super, b.y0 / tiles_per_super, b.y1 / tiles_per_super};
}

// The supertiles of a range as bits sy * 8 + sx of a 64-bit mask.
__device__ __forceinline__ unsigned long long super_bits(SuperRange r) {
    if (r.x0 > r.x1) return 0ull;
    const unsigned row = (2u << r.x1) - (1u << r.x0);                        // bits x0..x1 of a row
    const unsigned long long rows = 0x0101010101010101ull * row;             // ... in every row
    const unsigned long long below = (1ull << (8 * r.y0)) - 1ull;            // rows before y0
    const unsigned long long through = r.y1 >= 7 ? ~0ull : (1ull << (8 * r.y1 + 8)) - 1ull;
    return rows & through & ~below;
}

// The supertile of mask bit b, or -1 for bits past the grid (SUPER_GRID < 8).
__device__ __forceinline__ int super_of_bit(int b) {
    const int sx = b & 7, sy = b >> 3;
    return sx < SUPER_GRID && sy < SUPER_GRID ? sy * SUPER_GRID + sx : -1;
}

// 32 x 32 bit transpose across a warp: afterwards bit i of lane j is bit j of lane i's input.
// Five exchanges of blocks of 16, 8, 4, 2 and 1 bits with the lane that far away.
__device__ __forceinline__ unsigned transpose32(unsigned x) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int s = 16; s; s >>= 1) {
        const unsigned m = s == 16 ? 0x0000ffffu : s == 8 ? 0x00ff00ffu : s == 4 ? 0x0f0f0f0fu
                         : s == 2 ? 0x33333333u : 0x55555555u;           // bits whose index has bit s clear
        const unsigned y = __shfl_xor_sync(FULL, x, s);
        x = lane & s ? ((y >> s) & m) | (x & ~m) : (x & m) | ((y & m) << s);
    }
    return x;
}

// For the warp's 32 masks: lane l gets the lanes touching mask bits l (lo) and l + 32 (hi).
struct Columns { unsigned lo, hi; };

__device__ __forceinline__ Columns columns(unsigned long long bits) {
    return {transpose32((unsigned)bits), transpose32((unsigned)(bits >> 32))};
}

// Walks a warp's `items` groups of 32 circles from `first`, loading the next group while the
// current one is binned; calls visit(index, tile box) with the lane's circle of each group
// (every lane calls it the same number of times: past n, with an empty box).
template <class Visit>
__device__ __forceinline__ void for_each_circle_group(const float4* __restrict__ circles, int n, int first,
                                                      int items, int width, int height, Visit visit) {
    const int lane = threadIdx.x & 31;
    float4 next = first + lane < n ? circles[first + lane] : make_float4(0.f, 0.f, 0.f, 0.f);
    for (int it = 0; it < items && first + it * 32 < n; ++it) {
        const int i = first + it * 32 + lane;
        const float4 c = next;
        if (it + 1 < items && i + 32 < n) next = circles[i + 32];
        visit(i, i < n ? tile_box(c, width, height, FAST_TILE) : TileBox{1, 0, 1, 0});
    }
}

// Block b handles circles [b * chunk, (b + 1) * chunk), chunk = BIN_THREADS * items, each warp
// 32 * items of them. Writes counts[s * chunks + b] (circles of the chunk touching s) and, for
// bin_emit, warp_offsets[(b * BIN_WARPS + w) * SUPERTILES + s] (those before warp w).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super,
          int items, int* __restrict__ counts, int* __restrict__ warp_offsets, int chunks,
          const int* __restrict__ gate) {
    if (*gate == 0) return;
    __shared__ int per_warp[BIN_WARPS][64];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    int held_lo = 0, held_hi = 0;          // lane l: the warp's circles touching bits l and l + 32
    for_each_circle_group(circles, n, first, items, width, height, [&](int, TileBox b) {
        const Columns col = columns(super_bits(super_range(b, tiles_per_super)));
        held_lo += __popc(col.lo);
        held_hi += __popc(col.hi);
    });
    per_warp[warp][lane] = held_lo;
    per_warp[warp][lane + 32] = held_hi;
    __syncthreads();
    for (int bit = threadIdx.x; bit < 64; bit += BIN_THREADS) {
        const int s = super_of_bit(bit);
        if (s < 0) continue;
        int sum = 0;
        for (int w = 0; w < BIN_WARPS; ++w) {
            warp_offsets[(blockIdx.x * BIN_WARPS + w) * SUPERTILES + s] = sum;
            sum += per_warp[w][bit];
        }
        counts[s * chunks + blockIdx.x] = sum;
    }
}

// Block s: row s of counts (one count per chunk) becomes its exclusive prefix sum and
// totals[s] the row's sum, the length of supertile s's list.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
bin_scan(int* __restrict__ counts, int chunks, int* __restrict__ totals, const int* __restrict__ gate) {
    if (*gate == 0) return;
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
         const int* __restrict__ warp_offsets, int chunks, uint2* __restrict__ list, int capacity,
         const int* __restrict__ gate) {
    if (*gate == 0) return;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    const unsigned lower = (1u << lane) - 1u;
    int next_lo = 0, next_hi = 0;          // where this warp's next entry for bits lane, lane + 32 goes
    for (int half = 0; half < 2; ++half) {
        const int s = super_of_bit(lane + 32 * half);
        const int next = s < 0 ? 0 : list_start(totals, s) + row_offsets[s * chunks + blockIdx.x] +
                                     warp_offsets[(blockIdx.x * BIN_WARPS + warp) * SUPERTILES + s];
        (half ? next_hi : next_lo) = next;
    }
    for_each_circle_group(circles, n, first, items, width, height, [&](int i, TileBox b) {
        unsigned long long rest = super_bits(super_range(b, tiles_per_super));
        const Columns col = columns(rest);
        while (__any_sync(FULL, rest != 0ull)) {          // one of this lane's supertiles a round
            const int bit = rest ? __ffsll((long long)rest) - 1 : 0;
            const int src = bit & 31;
            const unsigned lanes_lo = __shfl_sync(FULL, col.lo, src), lanes_hi = __shfl_sync(FULL, col.hi, src);
            const int base_lo = __shfl_sync(FULL, next_lo, src), base_hi = __shfl_sync(FULL, next_hi, src);
            if (rest) {
                const bool upper = bit >= 32;
                const int pos = (upper ? base_hi : base_lo) + __popc((upper ? lanes_hi : lanes_lo) & lower);
                const int cx = (bit & 7) * tiles_per_super, cy = (bit >> 3) * tiles_per_super;
                if (pos < capacity) list[pos] = make_uint2((unsigned)i, pack_in_cell(b, cx, cy, tiles_per_super));
                rest &= rest - 1ull;
            }
        }
        next_lo += __popc(col.lo);
        next_hi += __popc(col.hi);
    });
}
