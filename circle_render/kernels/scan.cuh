// Scans of one value per thread: warp-wide inclusive (shuffles), and block-wide exclusive (each
// warp's, then the warp totals scanned through shared memory). Used by the tiled renderer's
// cull, the fast renderer's list scans (bin_scan, sparse_bin_shared, sparse_bin_scan_groups) and
// staged hits, and scan.cu. T is any integer type (a 64-bit one can carry several small counts in bit
// fields: they add independently as long as no field overflows).
#pragma once

// The thread's place in its block. The project's kernels are 1D; helpers.cuh (the assignment's
// header) defines this as the linear index of any block shape before it includes this file.
#ifndef SCAN_THREAD_INDEX
#define SCAN_THREAD_INDEX threadIdx.x
#endif

// Inclusive scan of one value per lane across a whole warp (every lane must call it).
template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T value) {
    const int lane = SCAN_THREAD_INDEX & 31;
#pragma unroll
    for (int step = 1; step < 32; step <<= 1) {
        T up = __shfl_up_sync(0xffffffffu, value, step);
        if (lane >= step) value += up;
    }
    return value;
}

// warp_sums: __shared__ T[32] owned by the caller. (Template parameters are named kThreads, kWarps:
// a student's own THREADS macro must not meet them, helpers.cuh.) Returns this thread's exclusive prefix
// and sets total to the block's sum. Contains __syncthreads(); every thread must call it.
template <int kThreads, typename T>
__device__ __forceinline__ T block_exclusive_scan(T value, T& total, T* warp_sums) {
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "block must be whole warps, <= 1024");
    constexpr int kWarps = kThreads / 32;
    const int lane = SCAN_THREAD_INDEX & 31, warp = SCAN_THREAD_INDEX >> 5;
    const T inclusive = warp_inclusive_scan(value);
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const T s = warp_inclusive_scan(lane < kWarps ? warp_sums[lane] : T(0));
        if (lane < kWarps) warp_sums[lane] = s;   // inclusive scan of the warp totals
    }
    __syncthreads();
    T before = warp > 0 ? warp_sums[warp - 1] : T(0);
    total = warp_sums[kWarps - 1];
    __syncthreads();   // warp_sums may be reused by the caller's next scan
    return before + inclusive - value;
}

// One block scans values 0..n-1 (exclusive), kThreads at a time with a carry: write(i, prefix)
// gets each one's prefix of read(0..i-1). Returns the sum of all n. Every thread must call it.
template <int kThreads, class Read, class Write>
__device__ __forceinline__ int block_exclusive_scan_n(int n, Read read, Write write, int* warp_sums) {
    int carry = 0;
    for (int base = 0; base < n; base += kThreads) {
        const int i = base + SCAN_THREAD_INDEX;
        int total;
        const int before = block_exclusive_scan<kThreads>(i < n ? read(i) : 0, total, warp_sums);
        if (i < n) write(i, carry + before);
        carry += total;
    }
    return carry;
}
