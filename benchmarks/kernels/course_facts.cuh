// The course's helpers as the facts describe them (../shared/spec/course-facts.md), written in
// the course's style for benchmarks/course_helpers.py, which times each against the scaffold's
// own (circle_render/kernels/course_compat.cuh) in the course's shapes. Instrumentation: not
// part of the package, and not the course's code.
#pragma once
#include "course_compat.cuh"

// The ramp with one more entry than the course's five, so that entry base + 1 can be read without
// a clamp (the facts: "base + 1 is only reached with w = 0"), as the course's lookup reads it.
__constant__ float factsColorRamp[COLOR_MAP_SIZE + 1][3] = {
    {CR_SNOW_RAMP_R0, CR_SNOW_RAMP_G0, CR_SNOW_RAMP_B0}, {CR_SNOW_RAMP_R1, CR_SNOW_RAMP_G1, CR_SNOW_RAMP_B1},
    {CR_SNOW_RAMP_R2, CR_SNOW_RAMP_G2, CR_SNOW_RAMP_B2}, {CR_SNOW_RAMP_R3, CR_SNOW_RAMP_G3, CR_SNOW_RAMP_B3},
    {CR_SNOW_RAMP_R4, CR_SNOW_RAMP_G4, CR_SNOW_RAMP_B4}, {CR_SNOW_RAMP_R4, CR_SNOW_RAMP_G4, CR_SNOW_RAMP_B4}};

// scaled = d * 4, base = min(int(scaled), 4), w = scaled - base: entries base and base + 1 by 1 - w, w.
__device__ __inline__ float3 factsLookupColor(float coord) {
    const float scaled = coord * (COLOR_MAP_SIZE - 1);
    const short base = min(static_cast<short>(scaled), static_cast<short>(COLOR_MAP_SIZE - 1));
    const float w = scaled - static_cast<float>(base), keep = 1.f - w;
    return make_float3(keep * factsColorRamp[base][0] + w * factsColorRamp[base + 1][0],
                       keep * factsColorRamp[base][1] + w * factsColorRamp[base + 1][1],
                       keep * factsColorRamp[base][2] + w * factsColorRamp[base + 1][2]);
}

// Covered when dx * dx + dy * dy <= r * r; snow: colour from the ramp at d = sqrt(dist2) / r,
// alpha = (0.5 * clamp(0.6 + 0.4 * (1 - z), 0, 1)) * exp((-4 * d) * d); else the circle's colour
// and alpha 1/2; rgb <- alpha * colour + (1 - alpha) * rgb, a += alpha.
__device__ __inline__ void factsShadePixel(int circleIndex, float2 pixelCenter, float3 p, float4* imagePtr) {
    const float dx = pixelCenter.x - p.x, dy = pixelCenter.y - p.y;
    const float dist2 = dx * dx + dy * dy;
    const float r = cuConstRendererParams.radius[circleIndex];
    if (dist2 > r * r) return;
    float3 colour;
    float alpha;
    if (cuConstRendererParams.sceneName == SNOWFLAKES || cuConstRendererParams.sceneName == SNOWFLAKES_SINGLE_FRAME) {
        const float d = sqrtf(dist2) / r;
        colour = factsLookupColor(d);
        alpha = (.5f * fmaxf(fminf(.6f + .4f * (1.f - p.z), 1.f), 0.f)) * expf(-4.f * d * d);
    } else {
        colour = *(float3*)&cuConstRendererParams.color[3 * circleIndex];
        alpha = .5f;
    }
    const float4 before = *imagePtr;
    float4 after;
    after.x = alpha * colour.x + (1.f - alpha) * before.x;
    after.y = alpha * colour.y + (1.f - alpha) * before.y;
    after.z = alpha * colour.z + (1.f - alpha) * before.z;
    after.w = alpha + before.w;
    *imagePtr = after;
}

// The circle's bounding square overlaps the box [L, R] x [B, T] (arguments left, right, top, bottom).
__device__ __inline__ int factsCircleInBoxConservative(float x, float y, float r, float L, float R, float T, float B) {
    return (x >= L - r && x <= R + r && y >= B - r && y <= T + r) ? 1 : 0;
}

// The box's point nearest the centre is within the radius.
__device__ __inline__ int factsCircleInBox(float x, float y, float r, float L, float R, float T, float B) {
    const float nx = x > L ? (x < R ? x : R) : L;
    const float ny = y > B ? (y < T ? y : T) : B;
    const float dx = nx - x, dy = ny - y;
    return dx * dx + dy * dy <= r * r ? 1 : 0;
}

// The inclusive scan of lanes 0 .. width - 1 of one warp in a window of 2 * width entries of
// shared memory: the lower half zeros, the upper half the values, doubling steps while step <
// width (5 for a whole warp), __syncwarp only.
__device__ __inline__ uint factsWarpScan(uint value, volatile uint* window, uint lane, uint width = 32,
                                         unsigned mask = 0xffffffffu) {
    window[lane] = 0;
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

// The facts' scan, size = the block's threads (a power of two, at most 1024): each warp scans its
// values in its window; barrier; the last lane of each warp posts the warp's total; barrier; the
// first size / 32 threads scan the totals (exclusive) the same way; barrier; each thread adds its
// warp's offset. One warp: its scan alone.
__device__ __inline__ void factsScan(int threadIndex, uint* sInput, uint* sOutput, volatile uint* sScratch, uint size) {
    const uint lane = threadIndex & 31, warp = threadIndex >> 5;
    const uint value = sInput[threadIndex];
    const uint inclusive = factsWarpScan(value, sScratch + 64 * warp, lane);
    if (size <= 32) {
        sOutput[threadIndex] = inclusive - value;
        return;
    }
    __syncthreads();
    if (lane == 31) sScratch[warp] = inclusive;
    __syncthreads();
    const uint warps = size / 32;
    if (threadIndex < warps) {
        const uint total = sScratch[lane];
        sScratch[lane] = factsWarpScan(total, sScratch + 64, lane, warps, warps == 32 ? 0xffffffffu : (1u << warps) - 1u)
                         - total;
    }
    __syncthreads();
    sOutput[threadIndex] = inclusive - value + sScratch[warp];
}

// Not the facts': the same three barriers with each warp's scan in shuffles (course_compat.cuh's
// scan before it took the course's warp step), kept to show what a faster scan changes.
__device__ __inline__ void shuffleScan(int threadIndex, uint* sInput, uint* sOutput, volatile uint* sScratch, uint size) {
    const uint lane = threadIndex & 31, warp = threadIndex >> 5;
    const uint value = sInput[threadIndex];
    const uint inclusive = courseWarpInclusiveScan(value, lane, 0xffffffffu);
    if (lane == 31) sScratch[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const uint total = courseWarpInclusiveScan(lane < size / 32 ? sScratch[lane] : 0u, lane, 0xffffffffu);
        if (lane < size / 32) sScratch[lane] = total;
    }
    __syncthreads();
    sOutput[threadIndex] = inclusive - value + (warp > 0 ? sScratch[warp - 1] : 0u);
    __syncthreads();
}
