// Device-wide exclusive scan of int32 and find_repeats, in one pass over memory.
//
// Single-pass scan with decoupled look-back: each block takes the next tile of
// SCAN_THREADS * SCAN_ITEMS elements (tile ids from an atomic counter, so a block only ever
// waits on tiles that are already running), scans it with block_exclusive_scan, publishes
// the tile's sum, then reads its predecessors' published sums (or their inclusive prefix,
// which ends the walk) to find what comes before it. Input is read once and output written
// once: the same traffic as a copy. Reads and writes go through shared memory so that they
// are whole coalesced rows.
//
// status[t] is tile t's word: the 32-bit sum in the low bits, above it a 2-bit flag (1
// aggregate, 2 inclusive prefix) and the launch's epoch. A word from an earlier launch has an
// older epoch and reads as not ready, so nothing is zeroed between launches; tile ids come
// from a counter that is never reset either (this launch's ids start at ``base``). Flag and
// value go out in one 64-bit store, so no fence is needed between them.
#include "scan.cuh"

// SCAN_THREADS, SCAN_ITEMS and TILE_ITEMS come from circle_render/constants.py (-D).
static_assert(SCAN_ITEMS % 4 == 0, "SCAN_ITEMS must be a multiple of 4 (int4 loads)");

#define FLAG_AGGREGATE 1ull
#define FLAG_PREFIX 2ull
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ void publish(unsigned long long* word, unsigned long long tag, int value) {
    *reinterpret_cast<volatile unsigned long long*>(word) = (tag << 32) | static_cast<unsigned>(value);
}

// Warp 0 of tile ``tile`` (> 0): the sum of every element before the tile. Reads 32
// predecessors at a time, waits while any is not ready, adds aggregates back to the nearest
// inclusive prefix.
__device__ int look_back(const unsigned long long* tiles, long long tile, int lane, unsigned epoch) {
    int before = 0;
    const unsigned long long aggregate = (epoch << 2) | FLAG_AGGREGATE, prefix = (epoch << 2) | FLAG_PREFIX;
    for (long long pred = tile - 1 - lane;; pred -= 32) {
        unsigned long long word;
        do {
            word = pred >= 0 ? *reinterpret_cast<const volatile unsigned long long*>(tiles + pred)
                             : (prefix << 32);        // before tile 0: a prefix of 0
        } while (__any_sync(FULL_MASK, (word >> 32) != aggregate && (word >> 32) != prefix));
        const unsigned prefixes = __ballot_sync(FULL_MASK, (word >> 32) == prefix);
        const int last = prefixes ? __ffs(prefixes) - 1 : 31;   // nearest tile with a prefix
        int part = lane <= last ? static_cast<int>(static_cast<unsigned>(word)) : 0;
#pragma unroll
        for (int step = 16; step > 0; step >>= 1) part += __shfl_xor_sync(FULL_MASK, part, step);
        before += part;
        if (prefixes) return before;
    }
}

// stage is addressed through a swizzle of its int4 slots so that both the row-wise (slot
// q * SCAN_THREADS + t) and the per-thread (slot SCAN_ITEMS / 4 * t + q) accesses of 8 threads
// fall in 8 different 16-byte bank groups: without it the per-thread ones conflict 4 ways.
__device__ __forceinline__ int swizzle(int slot) { return slot ^ ((slot >> 3) & 7); }
__device__ __forceinline__ int4& slot_at(int* stage, int slot) {
    return reinterpret_cast<int4*>(stage)[swizzle(slot)];
}
__device__ __forceinline__ int& item_at(int* stage, int i) { return stage[swizzle(i >> 2) * 4 + (i & 3)]; }

// Global memory is read and written in whole coalesced rows (int4 per thread, consecutive
// threads on consecutive addresses) through the shared ``stage``; each thread then works on
// SCAN_ITEMS consecutive elements of the tile.
__device__ __forceinline__ void load_tile(const int* __restrict__ x, long long start, long long n,
                                          int* stage) {
    if (start + TILE_ITEMS <= n) {
        const int4* src = reinterpret_cast<const int4*>(x + start);
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS / 4; ++q) {
            const int i = q * SCAN_THREADS + threadIdx.x;
            slot_at(stage, i) = __ldcs(src + i);
        }
    } else {
        for (int i = threadIdx.x; i < TILE_ITEMS; i += SCAN_THREADS) item_at(stage, i) = start + i < n ? x[start + i] : 0;
    }
}

template <bool REPEATS>
__device__ __forceinline__ void scan_tile(const int* __restrict__ x, int* __restrict__ out,
                                          long long n, unsigned long long* tiles,
                                          unsigned long long* counter, long long base,
                                          unsigned epoch, int* count) {
    __shared__ __align__(16) int stage[TILE_ITEMS];
    __shared__ int warp_sums[32];
    __shared__ long long s_tile;
    __shared__ int s_before;
    if (threadIdx.x == 0) s_tile = static_cast<long long>(atomicAdd(counter, 1ull)) - base;
    __syncthreads();
    const long long tile = s_tile, start = tile * TILE_ITEMS;
    const int mine0 = threadIdx.x * SCAN_ITEMS;          // this thread's first item in the tile
    load_tile(x, start, n, stage);
    __syncthreads();

    int v[SCAN_ITEMS];
#pragma unroll
    for (int q = 0; q < SCAN_ITEMS / 4; ++q) {
        const int4 w = slot_at(stage, mine0 / 4 + q);
        v[4 * q] = w.x; v[4 * q + 1] = w.y; v[4 * q + 2] = w.z; v[4 * q + 3] = w.w;
    }
    if (REPEATS) {                                       // v[k] becomes the flag x[i] == x[i+1]
        const long long after_last = start + mine0 + SCAN_ITEMS;
        const int next = threadIdx.x + 1 < SCAN_THREADS ? item_at(stage, mine0 + SCAN_ITEMS)
                         : (after_last < n ? x[after_last] : 0);
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) {
            const int after = k + 1 < SCAN_ITEMS ? v[k + 1] : next;
            v[k] = (start + mine0 + k + 1 < n) && v[k] == after;
        }
    }

    int mine = 0;
#pragma unroll
    for (int k = 0; k < SCAN_ITEMS; ++k) mine += v[k];
    int tile_sum;
    // ends with __syncthreads(): every thread is done reading stage
    const int in_tile = block_exclusive_scan<SCAN_THREADS>(mine, tile_sum, warp_sums);

    if (threadIdx.x < 32) {
        const unsigned long long tag = static_cast<unsigned long long>(epoch) << 2;
        int before = 0;
        if (tile == 0) {
            if (threadIdx.x == 0) publish(tiles, tag | FLAG_PREFIX, tile_sum);
        } else {
            if (threadIdx.x == 0) publish(tiles + tile, tag | FLAG_AGGREGATE, tile_sum);
            before = look_back(tiles, tile, threadIdx.x, epoch);
            if (threadIdx.x == 0) publish(tiles + tile, tag | FLAG_PREFIX, before + tile_sum);
        }
        if (threadIdx.x == 0) {
            s_before = before;
            if (REPEATS && start + TILE_ITEMS >= n) *count = before + tile_sum;   // the last tile
        }
    }

    int running = in_tile;
    if (REPEATS) {                        // the tile's repeats, packed in order (stage read
                                          // linearly, no swizzle), then copied out
#pragma unroll
        for (int k = 0; k < SCAN_ITEMS; ++k) {
            if (v[k]) stage[running] = static_cast<int>(start + mine0 + k);
            running += v[k];
        }
        __syncthreads();
        int* dst = out + s_before;
        for (int i = threadIdx.x; i < tile_sum; i += SCAN_THREADS) __stcs(dst + i, stage[i]);
    } else {
#pragma unroll
        for (int q = 0; q < SCAN_ITEMS / 4; ++q) {
            int4 w;
            w.x = running; running += v[4 * q];
            w.y = running; running += v[4 * q + 1];
            w.z = running; running += v[4 * q + 2];
            w.w = running; running += v[4 * q + 3];
            slot_at(stage, mine0 / 4 + q) = w;
        }
        __syncthreads();
        const int before = s_before;
        if (start + TILE_ITEMS <= n) {
            int4* dst = reinterpret_cast<int4*>(out + start);
#pragma unroll
            for (int q = 0; q < SCAN_ITEMS / 4; ++q) {
                const int i = q * SCAN_THREADS + threadIdx.x;
                int4 w = slot_at(stage, i);
                w.x += before; w.y += before; w.z += before; w.w += before;
                __stcs(dst + i, w);
            }
        } else {
            for (int i = threadIdx.x; start + i < n; i += SCAN_THREADS) out[start + i] = item_at(stage, i) + before;
        }
    }
}

// out[i] = x[0] + ... + x[i-1] (out[0] = 0), wrapping like int32. One block per tile.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
exclusive_scan_i32(const int* __restrict__ x, int* __restrict__ out, long long n,
                   unsigned long long* tiles, unsigned long long* counter, long long base, int epoch) {
    scan_tile<false>(x, out, n, tiles, counter, base, static_cast<unsigned>(epoch), nullptr);
}

// out[0..count) = the indices i with x[i] == x[i+1], in order; *count = how many.
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
find_repeats_i32(const int* __restrict__ x, int* __restrict__ out, long long n,
                 unsigned long long* tiles, unsigned long long* counter, long long base, int epoch,
                 int* count) {
    scan_tile<true>(x, out, n, tiles, counter, base, static_cast<unsigned>(epoch), count);
}
