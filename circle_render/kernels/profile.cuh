// Per-block profiling of the draw kernels, compiled in only for diagnostics
// (benchmarks/block_profile.py compiles with -DPROFILE_BLOCKS=<blocks>): per block its start
// and end on the global timer (ns), SM, cull steps and hits blended. Without PROFILE_BLOCKS
// every macro is empty.
#pragma once

#ifdef PROFILE_BLOCKS
__device__ unsigned long long block_profile[PROFILE_BLOCKS][4];
__shared__ int profile_steps, profile_hits;   // kept by thread 0: steps, hits its warp blended
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void profile_block(unsigned long long start) {
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        unsigned long long* rec = block_profile[blockIdx.y * gridDim.x + blockIdx.x];
        rec[0] = start;
        rec[1] = global_ns();
        rec[2] = (unsigned long long)smid << 32 | (unsigned)profile_steps;
        rec[3] = (unsigned)profile_hits;
    }
}
#define PROFILE_START                                                                          \
    const unsigned long long profile_start = global_ns();                                     \
    if (threadIdx.x == 0) profile_steps = profile_hits = 0;
#define PROFILE_STEP if (threadIdx.x == 0) ++profile_steps;
#define PROFILE_STEP_HIT if (threadIdx.x == 0) ++profile_hits;
#define PROFILE_END profile_block(profile_start);
#else
#define PROFILE_START
#define PROFILE_STEP
#define PROFILE_STEP_HIT
#define PROFILE_END
#endif
