// Each course-compatible helper (course_compat.cuh) against its version from the facts
// (course_facts.cuh), in the course's shapes, for benchmarks/course_helpers.py. HELPERS picks the
// set at compile time: 0 the scaffold's, 1 the facts', 2 the scaffold's with its any-shape scan
// (Hillis and Steele: what course_compat.cuh had first, 10 barriers at 256), 3 its scan of
// shuffles (course_facts.cuh's shuffleScan: what it had next, before it took the course's warp step).
#include "course_facts.cuh"

#ifndef HELPERS
#define HELPERS 0
#endif
#if HELPERS == 1
#define SCAN factsScan
#define SHADE factsShadePixel
#define LOOKUP factsLookupColor
#define IN_BOX_CONSERVATIVE factsCircleInBoxConservative
#define IN_BOX factsCircleInBox
#else
#define SHADE shadePixel
#define LOOKUP lookupColor
#define IN_BOX_CONSERVATIVE circleInBoxConservative
#define IN_BOX circleInBox
#if HELPERS == 2
#define SCAN(t, in, out, scratch, size) courseScanAnyShape(in, out, scratch, size)
#elif HELPERS == 3
#define SCAN shuffleScan
#else
#define SCAN sharedMemExclusiveScan
#endif
#endif

// The cull loop's scan: a block (16 x 16 or 32 x 32) scans its hit flags reps times, as the tiled
// design does once per chunk of circles; out gets each block's sum of prefixes (kept live).
extern "C" __global__ void bench_scan(int reps, uint* out) {
    __shared__ uint flags[1024], places[1024], scratch[2048];
    const int t = threadIdx.y * blockDim.x + threadIdx.x, size = blockDim.x * blockDim.y;
    uint acc = 0;
    for (int rep = 0; rep < reps; rep++) {
        flags[t] = ((t * 2654435761u + rep * 40503u + blockIdx.x * 7u) >> 13) & 1u;
        __syncthreads();
        SCAN(t, flags, places, scratch, size);
        __syncthreads();
        acc += places[(t + rep) & (size - 1)];
        __syncthreads();
    }
    if (acc == 0xffffffffu) out[blockIdx.x] = acc;
}

// A pixel a thread (16 x 16 blocks over the image) blends circles first .. first + count - 1 of the
// scene with the course's shadePixel signature, the pixel kept in a register.
extern "C" __global__ void bench_shade(int first, int count) {
    const int width = cuConstRendererParams.imageWidth, height = cuConstRendererParams.imageHeight;
    const int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    if (x >= width || y >= height) return;
    const float2 centre = make_float2((1.f / width) * (x + 0.5f), (1.f / height) * (y + 0.5f));
    float4* pixel = (float4*)&cuConstRendererParams.imageData[4 * (y * width + x)];
    float4 colour = *pixel;
    for (int i = first; i < first + count; i++)
        SHADE(i, centre, *(float3*)&cuConstRendererParams.position[3 * i], &colour);
    *pixel = colour;
}

// The snow ramp at n coordinates a thread.
extern "C" __global__ void bench_lookup(int n, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float3 acc = make_float3(0.f, 0.f, 0.f);
    for (int k = 0; k < n; k++) {
        const float3 c = LOOKUP(((i * 31 + k * 17) & 1023) * (1.f / 1023.f));
        acc.x += c.x; acc.y += c.y; acc.z += c.z;
    }
    out[i] = acc.x + acc.y + acc.z;
}

// Every circle against this block's 16 x 16 tile, a circle a thread at a time (the cull loop's
// test): exact = 0 the conservative test, 1 the conservative then the exact one.
extern "C" __global__ void bench_box(int exact, int* out) {
    const int width = cuConstRendererParams.imageWidth, height = cuConstRendererParams.imageHeight;
    const float L = (float)(blockIdx.x * 16) / width, R = (float)min((int)(blockIdx.x + 1) * 16, width) / width;
    const float B = (float)(blockIdx.y * 16) / height, T = (float)min((int)(blockIdx.y + 1) * 16, height) / height;
    const int t = threadIdx.y * 16 + threadIdx.x;
    int hits = 0;
    for (int i = t; i < cuConstRendererParams.numCircles; i += 256) {
        const float3 p = *(float3*)&cuConstRendererParams.position[3 * i];
        const float r = cuConstRendererParams.radius[i];
        hits += IN_BOX_CONSERVATIVE(p.x, p.y, r, L, R, T, B) && (!exact || IN_BOX(p.x, p.y, r, L, R, T, B));
    }
    if (hits < 0) out[0] = hits;
    if (t == 0 && hits == 123456789) out[1] = hits;
}
