// Block-wide exclusive scan of one int per thread: warp shuffles, then the warp totals
// scanned through shared memory. Used by the tiled renderer's cull and by scan.cu.
#pragma once

// warp_sums: __shared__ int[32] owned by the caller. Returns this thread's exclusive prefix
// and sets total to the block's sum. Contains __syncthreads(); every thread must call it.
template <int THREADS>
__device__ __forceinline__ int block_exclusive_scan(int value, int& total, int* warp_sums) {
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "block must be whole warps, <= 1024");
    constexpr int WARPS = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int inclusive = value;
#pragma unroll
    for (int step = 1; step < 32; step <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, inclusive, step);
        if (lane >= step) inclusive += up;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int s = lane < WARPS ? warp_sums[lane] : 0;
#pragma unroll
        for (int step = 1; step < 32; step <<= 1) {
            int up = __shfl_up_sync(0xffffffffu, s, step);
            if (lane >= step) s += up;
        }
        if (lane < WARPS) warp_sums[lane] = s;   // inclusive scan of the warp totals
    }
    __syncthreads();
    int before = warp > 0 ? warp_sums[warp - 1] : 0;
    total = warp_sums[WARPS - 1];
    __syncthreads();   // warp_sums may be reused by the caller's next scan
    return before + inclusive - value;
}
