// The course's names, for porting course-style kernels into the scaffold (docs/assignment.md,
// "Porting course code"). Include it from your kernel file:
//     #include "course_compat.cuh"
// It includes helpers.cuh. Written from the course's documented interface (names, arguments and
// meanings) and the facts of its harness (../shared/spec/course-facts.md), not from its code;
// tests/assignment/test_course_compat_gpu.py checks each against NumPy, and benchmarks/course_helpers.py
// times each against a version written from the facts in the course's shapes.
//
//   uint                                   unsigned int (NVRTC has no glibc headers to give it)
//   cuConstRendererParams                  __constant__ GlobalConstants, filled by the scaffold
//                                          (circle_render/cuda/student.py: CourseParams) before
//                                          every frame's launches:
//       .sceneName                         a SceneName (below): which scene, for its shading
//       .numCircles                        n
//       .position, .velocity, .color       3n floats each (x, y, z / vx, vy, vz / r, g, b)
//       .radius                            n floats
//       .imageWidth, .imageHeight          pixels
//       .imageData                         4 * width * height floats (r, g, b, a), row 0 at the bottom
//   float3 lookupColor(float coord)        the snow colour ramp at coord in [0, 1]
//   void shadePixel(int circleIndex, float2 pixelCenter, float3 p, float4* imagePtr)
//       If circle circleIndex (centre p, radius from the block) covers the normalised pixel
//       centre, reads *imagePtr, blends the circle in (alpha 1/2 and its colour, or the snow
//       shading in the snow scenes) and writes it back; else touches nothing.
//   int circleInBoxConservative(float circleX, float circleY, float circleRadius,
//                               float boxL, float boxR, float boxT, float boxB)
//       1 when the circle's bounding square overlaps the box [boxL, boxR] x [boxB, boxT] (note
//       the order: left, right, TOP, bottom); never 0 for a circle that touches the box.
//   int circleInBox(... the same arguments ...)
//       1 exactly when the disc meets the box.
//   void sharedMemExclusiveScan(int threadIndex, uint* sInput, uint* sOutput,
//                               volatile uint* sScratch, uint size)
//       sOutput[i] = sInput[0] + ... + sInput[i - 1] for i < size, all in shared memory;
//       sScratch holds 2 * size entries. Every thread of the block calls it, threadIndex its
//       linear index in the block (threadIdx.y * blockDim.x + threadIdx.x), as the course
//       requires. The course's case, size = the block's thread count (a power of two up to 1024,
//       or any whole number of warps), 1D or 2D blocks, works as the course's scan does and costs
//       what it costs: 3 block barriers, each warp's scan in shared memory; 32 entries or fewer
//       are one warp scan by the block's first warp, no block barrier (that warp may call it
//       alone). sInput may be sOutput. As with the course's, __syncthreads() before reading
//       another thread's sOutput. Any other size (threads != size, or not whole warps) stops
//       the kernel, as it is outside the course's contract; define COURSE_SCAN_ANY_SHAPE
//       before including this file for a slower general path that scans it.
//
// Kept your own copy of one of these (a shadePixel you changed but whose parameters are the
// course's, the course's exclusiveScan.cu_inl beside your file)? Define COURSE_OWN_SHADE_PIXEL,
// COURSE_OWN_LOOKUP_COLOR, COURSE_OWN_BOX_TESTS or COURSE_OWN_SCAN before including this file,
// and this file leaves that name to you.
#pragma once
#include "helpers.cuh"

// Which scene: the course's names. The scaffold sets sceneName from the scene's name (a scene
// from a file: SNOWFLAKES_SINGLE_FRAME if it has the snow shading, else CUSTOM_SCENE).
enum SceneName {
    CIRCLE_RGB, CIRCLE_RGBY, CIRCLE_TEST_10K, CIRCLE_TEST_100K, PATTERN, SNOWFLAKES, FIREWORKS, HYPNOSIS,
    BOUNCING_BALLS, SNOWFLAKES_SINGLE_FRAME, BIG_LITTLE, LITTLE_BIG, CIRCLE_TEST_1M, MICRO_2M, CUSTOM_SCENE
};

// The layout circle_render/cuda/student.py writes (COURSE_PARAMS, 56 bytes).
struct GlobalConstants {
    SceneName sceneName;
    int numCircles;
    float* position;
    float* velocity;
    float* color;
    float* radius;
    int imageWidth;
    int imageHeight;
    float* imageData;
};
static_assert(sizeof(GlobalConstants) == 56, "circle_render/cuda/student.py writes 56 bytes");

__constant__ GlobalConstants cuConstRendererParams;

#define COLOR_MAP_SIZE (CR_SNOW_RAMP_LAST + 1)
// The course's five entries, then the last one again: the course's lookup reads entry base + 1
// unclamped (at base 4 its weight is 0), so a lookup here need not clamp it either: a clamp cost
// the port's blend loop a register, and ptxas then reloaded the scene's name for every blended circle.
__constant__ float cuConstColorRamp[COLOR_MAP_SIZE + 1][3] = {
    {CR_SNOW_RAMP_R0, CR_SNOW_RAMP_G0, CR_SNOW_RAMP_B0}, {CR_SNOW_RAMP_R1, CR_SNOW_RAMP_G1, CR_SNOW_RAMP_B1},
    {CR_SNOW_RAMP_R2, CR_SNOW_RAMP_G2, CR_SNOW_RAMP_B2}, {CR_SNOW_RAMP_R3, CR_SNOW_RAMP_G3, CR_SNOW_RAMP_B3},
    {CR_SNOW_RAMP_R4, CR_SNOW_RAMP_G4, CR_SNOW_RAMP_B4}, {CR_SNOW_RAMP_R4, CR_SNOW_RAMP_G4, CR_SNOW_RAMP_B4}};
static_assert(COLOR_MAP_SIZE == 5, "the course's ramp has five entries");

#ifndef COURSE_OWN_LOOKUP_COLOR
// Entries base and base + 1 weighted by 1 - w and w, with base = int(coord * 4) (at most 4).
__device__ __inline__ float3 lookupColor(float coord) {
    const float scaled = coord * (float)(COLOR_MAP_SIZE - 1);
    const int base = min((int)scaled, COLOR_MAP_SIZE - 1);
    const float w = scaled - (float)base, keep = 1.f - w;
    return make_float3(keep * cuConstColorRamp[base][0] + w * cuConstColorRamp[base + 1][0],
                       keep * cuConstColorRamp[base][1] + w * cuConstColorRamp[base + 1][1],
                       keep * cuConstColorRamp[base][2] + w * cuConstColorRamp[base + 1][2]);
}
#endif

#ifndef COURSE_OWN_SHADE_PIXEL
// The facts' arithmetic, operation for operation and with plain operators, so a student's file
// compiles to what the course's own shadePixel compiles to under the same options (the course
// fuses multiply-adds: nvcc's default, and the scaffold's for a student's file).
__device__ __inline__ void shadePixel(int circleIndex, float2 pixelCenter, float3 p, float4* imagePtr) {
    const float diffX = p.x - pixelCenter.x, diffY = p.y - pixelCenter.y;
    const float pixelDist = diffX * diffX + diffY * diffY;
    const float rad = cuConstRendererParams.radius[circleIndex];
    if (pixelDist > rad * rad) return;                  // not covered: the pixel is not touched
    float alpha;
    float3 rgb;
    const SceneName scene = cuConstRendererParams.sceneName;
    if (scene == SNOWFLAKES || scene == SNOWFLAKES_SINGLE_FRAME) {
        const float d = sqrtf(pixelDist) / rad;         // 0 at the centre, 1 on the rim
        rgb = lookupColor(d);
        const float maxAlpha = CR_SNOW_MAX_ALPHA
            * fmaxf(fminf(CR_SNOW_ALPHA_BASE + CR_SNOW_ALPHA_DEPTH * (1.f - p.z), 1.f), 0.f);
        alpha = maxAlpha * expf(-1.f * CR_SNOW_FALLOFF * d * d);
    } else {
        const float* color = cuConstRendererParams.color;
        rgb = make_float3(color[3 * circleIndex], color[3 * circleIndex + 1], color[3 * circleIndex + 2]);
        alpha = CR_FLAT_ALPHA;
    }
    const float keep = 1.f - alpha;
    const float4 old = *imagePtr;
    *imagePtr = make_float4(alpha * rgb.x + keep * old.x, alpha * rgb.y + keep * old.y,
                            alpha * rgb.z + keep * old.z, alpha + old.w);
}
#endif

#ifndef COURSE_OWN_BOX_TESTS
__device__ __inline__ int circleInBoxConservative(float circleX, float circleY, float circleRadius, float boxL,
                                                  float boxR, float boxT, float boxB) {
    return circleX >= boxL - circleRadius && circleX <= boxR + circleRadius && circleY >= boxB - circleRadius
        && circleY <= boxT + circleRadius;
}

__device__ __inline__ int circleInBox(float circleX, float circleY, float circleRadius, float boxL, float boxR,
                                      float boxT, float boxB) {
    return circle_in_box(make_float4(circleX, circleY, 0.f, circleRadius), boxL, boxR, boxB, boxT);
}
#endif

// Inclusive scan of one value a lane over the lanes in mask (lanes 0..k-1 of one warp), by
// shuffles: the scan of 32 or fewer entries.
__device__ __forceinline__ uint courseWarpInclusiveScan(uint value, uint lane, unsigned mask) {
#pragma unroll
    for (uint step = 1; step < 32; step <<= 1) {
        const uint up = __shfl_up_sync(mask, value, step);
        if (lane >= step) value += up;
    }
    return value;
}

// The inclusive scan of the values of lanes 0 .. width - 1 of one warp (width at most 32; mask:
// those lanes) in a window of 2 * width entries of shared memory (the lower half zeros, so no
// lane tests its index): doubling steps while step < width, __syncwarp only. The course's warp
// step (facts file): 5 steps for a whole warp, 3 for the 8 warp totals of a 256-thread block.
// Shuffles are faster (benchmarks/course_helpers.py), and a port must cost what its original costs.
__device__ __forceinline__ uint courseWindowScan(uint value, volatile uint* window, uint lane, uint width,
                                                 unsigned mask) {
    window[lane] = 0u;
    window[lane + width] = value;
    __syncwarp(mask);
    for (uint step = 1; step < width; step <<= 1) {
        const uint add = window[lane + width - step];
        __syncwarp(mask);
        window[lane + width] = window[lane + width] + add;
        __syncwarp(mask);
    }
    return window[lane + width];
}

// One whole warp's scan in its 64-entry window (5 steps).
__device__ __forceinline__ uint courseWarpWindowScan(uint value, volatile uint* window, uint lane) {
    return courseWindowScan(value, window, lane, 32u, 0xffffffffu);
}

// Any size, any block: Hillis and Steele's scan, ping-ponging between the halves of sScratch,
// each thread taking entries t, t + threads, ... (log2(size) + 2 block barriers).
__device__ __inline__ void courseScanAnyShape(uint* sInput, uint* sOutput, volatile uint* sScratch, uint size) {
    const uint t = thread_in_block(), threads = blockDim.x * blockDim.y * blockDim.z;
    for (uint i = t; i < size; i += threads) sScratch[i] = i > 0 ? sInput[i - 1] : 0u;   // shifted: exclusive
    __syncthreads();
    uint from = 0, to = size;
    for (uint step = 1; step < size; step <<= 1) {
        for (uint i = t; i < size; i += threads)
            sScratch[to + i] = sScratch[from + i] + (i >= step ? sScratch[from + i - step] : 0u);
        __syncthreads();
        const uint swap = from; from = to; to = swap;
    }
    for (uint i = t; i < size; i += threads) sOutput[i] = sScratch[from + i];
    __syncthreads();
}

#ifndef COURSE_OWN_SCAN
// The course's case (size = the block's threads, whole warps), as the facts describe the
// course's: each warp scans its values in its own window of sScratch; a block barrier; the last
// lane of each warp posts the warp's total; a barrier; the first size / 32 threads scan the
// totals (exclusive) the same way, in log2(size / 32) steps (3 at 256: a scan of all 32 lanes,
// 5 steps, made a 16 x 16 port's cull loop slower than its original's; examples/course_port/
// README.md); a barrier; each thread writes its inclusive prefix - its input + its
// warp's offset. 3 block barriers, and none after the last write: as with the course's,
// __syncthreads() before reading another thread's sOutput. threadIndex is the thread's linear
// index in its block (threadIdx.y * blockDim.x + threadIdx.x), as the course requires. At most
// 32 entries: one warp scan by the block's first warp (shuffles), no block barrier, as the
// course's (so the threads of that warp may call it alone, e.g. under `if (threadIdx.x < 16)`).
// Any other size breaks the course's contract: the kernel stops (__trap: "an illegal instruction
// was encountered"), where the course's scan would give wrong sums and the course's checker a
// wrong picture; with COURSE_SCAN_ANY_SHAPE defined, courseScanAnyShape scans it. That general
// path is left out by default because its code alone, never run, made ptxas rebuild the
// window's address on every call of the course's path: 4% slower at 32 x 32 than the facts'
// scan (benchmarks/course_helpers.py).
__device__ __inline__ void sharedMemExclusiveScan(int threadIndex, uint* sInput, uint* sOutput,
                                                  volatile uint* sScratch, uint size) {
    const uint lane = threadIndex & 31, warp = threadIndex >> 5;
    if (size <= 32) {
        if (warp != 0) return;
        const unsigned mask = __activemask();           // lanes 0 .. size - 1 at least
        const uint value = lane < size ? sInput[lane] : 0u;
        const uint inclusive = courseWarpInclusiveScan(value, lane, mask);
        if (lane < size) sOutput[lane] = inclusive - value;
        __syncwarp(mask);
        return;
    }
    if (size != blockDim.x * blockDim.y * blockDim.z || size % 32 != 0) {
#ifdef COURSE_SCAN_ANY_SHAPE
        courseScanAnyShape(sInput, sOutput, sScratch, size);
        return;
#else
        __trap();      // outside the course's contract, where its scan gives wrong sums: stop here
#endif
    }
    const uint value = sInput[threadIndex];
    const uint inclusive = courseWarpWindowScan(value, sScratch + 64 * warp, lane);
    __syncthreads();
    if (lane == 31) sScratch[warp] = inclusive;
    __syncthreads();
    const uint warps = size / 32;
    if (threadIndex < warps) {                          // lanes 0 .. warps - 1 of the first warp
        const uint total = sScratch[lane];
        const unsigned mask = warps == 32 ? 0xffffffffu : (1u << warps) - 1u;
        sScratch[lane] = courseWindowScan(total, sScratch + 64, lane, warps, mask) - total;   // warp 1's window: free
    }
    __syncthreads();
    sOutput[threadIndex] = inclusive - value + sScratch[warp];
}
#endif
