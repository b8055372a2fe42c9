// Helpers for the assignment (docs/assignment.md): include them from your kernel with
//     #include "helpers.cuh"
// Everything here is what the project's own renderers use; tests/assignment/test_assignment_gpu.py tests
// each one against NumPy. The shading constants come from circle_render/constants.py as compile
// options prefixed CR_ (CR_FLAT_ALPHA, ...): no other project macro reaches your file, so your
// own #define TILE_SIZE 32 is yours. For the course's names (cuConstRendererParams, shadePixel,
// circleInBox, sharedMemExclusiveScan, uint) include "course_compat.cuh" instead.
//
// Geometry (shade.cuh): circles are float4 (x, y, z, r) in the unit square, y up.
//   PixelBox circle_box(float4 c, int width, int height)
//       The circle's pixel box [x0, x1) x [y0, y1), clamped to the image, as the course computes it.
//   float pixel_centre(int i, int size)
//       Normalised centre of pixel i: (i + 0.5) / size, rounded as the reference rounds it.
//   float dist2(float4 c, float px, float py)
//       Squared distance from the circle's centre to the point; the pixel is covered when
//       dist2 <= c.w * c.w.
//
// Circle against box (this file), in normalised coordinates, box [left, right] x [bottom, top]:
//   bool circle_in_box_conservative(float4 c, float left, float right, float bottom, float top)
//       True when the circle's bounding square overlaps the box: never false for a circle
//       that touches the box, sometimes true for one that does not (near the corners). Cheap.
//   bool circle_in_box(float4 c, float left, float right, float bottom, float top)
//       True exactly when the disc and the box overlap (the point of the box nearest the
//       centre is within the radius).
//
// Scans (scan.cuh), one value per thread, from a block of any shape (1D, 16 x 16, 32 x 32 x 1:
// threads are counted x first, then y, then z, as the hardware forms warps):
//   T warp_inclusive_scan(T value)
//   T block_exclusive_scan<THREADS>(T value, T& total, T* warp_sums)
//       Every thread of a THREADS-thread block calls it (THREADS = blockDim.x * .y * .z, whole
//       warps); warp_sums is __shared__ T[32]. Returns the sum
//       of the values of the threads before this one and sets total to the block's sum. It
//       synchronizes the block (__syncthreads) inside.
//   unsigned thread_in_block()
//       This thread's linear index in its block: threadIdx.x + blockDim.x * (threadIdx.y +
//       blockDim.y * threadIdx.z).
//
// Shading (shade.cuh), both scene kinds:
//   void shade_pixel(float4& pixel, float4 c, const float* colors, int i, float px, float py, bool snow)
//       Blends circle i (its centre and radius c, its colour colors[3i..3i+2]) into pixel, an
//       (r, g, b, a) value, if it covers the pixel centre (px, py): flat scenes with alpha 1/2,
//       snow scenes (snow = true) with the course's snow shading. The pixel must be updated by
//       one thread at a time, and the circles must come in index order.
#pragma once

typedef unsigned int uint;      // nvcc gets it from glibc's headers; NVRTC (CuPy's compiler) has none

__device__ __forceinline__ unsigned thread_in_block() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// The project's headers use the bare constant names: in a student's compile (CR_ constants)
// they are defined here while those headers are read. (A project kernel compiled with project=True has them.)
#ifdef CR_FLAT_ALPHA
#define PIXEL_CENTRE CR_PIXEL_CENTRE
#define FLAT_ALPHA CR_FLAT_ALPHA
#define SNOW_MAX_ALPHA CR_SNOW_MAX_ALPHA
#define SNOW_ALPHA_BASE CR_SNOW_ALPHA_BASE
#define SNOW_ALPHA_DEPTH CR_SNOW_ALPHA_DEPTH
#define SNOW_FALLOFF CR_SNOW_FALLOFF
#define SNOW_RAMP_LAST CR_SNOW_RAMP_LAST
#define SNOW_RAMP_R0 CR_SNOW_RAMP_R0
#define SNOW_RAMP_R1 CR_SNOW_RAMP_R1
#define SNOW_RAMP_R2 CR_SNOW_RAMP_R2
#define SNOW_RAMP_R3 CR_SNOW_RAMP_R3
#define SNOW_RAMP_R4 CR_SNOW_RAMP_R4
#define SNOW_RAMP_G0 CR_SNOW_RAMP_G0
#define SNOW_RAMP_G1 CR_SNOW_RAMP_G1
#define SNOW_RAMP_G2 CR_SNOW_RAMP_G2
#define SNOW_RAMP_G3 CR_SNOW_RAMP_G3
#define SNOW_RAMP_G4 CR_SNOW_RAMP_G4
#define SNOW_RAMP_B0 CR_SNOW_RAMP_B0
#define SNOW_RAMP_B1 CR_SNOW_RAMP_B1
#define SNOW_RAMP_B2 CR_SNOW_RAMP_B2
#define SNOW_RAMP_B3 CR_SNOW_RAMP_B3
#define SNOW_RAMP_B4 CR_SNOW_RAMP_B4
#endif
// lane and warp of the scans from the linear index (threadIdx.x alone is wrong in a 2D block)
#define SCAN_THREAD_INDEX ((int)thread_in_block())
#include "shade.cuh"
#include "scan.cuh"
#ifdef CR_FLAT_ALPHA
#undef PIXEL_CENTRE
#undef FLAT_ALPHA
#undef SNOW_MAX_ALPHA
#undef SNOW_ALPHA_BASE
#undef SNOW_ALPHA_DEPTH
#undef SNOW_FALLOFF
#undef SNOW_RAMP_LAST
#undef SNOW_RAMP_R0
#undef SNOW_RAMP_R1
#undef SNOW_RAMP_R2
#undef SNOW_RAMP_R3
#undef SNOW_RAMP_R4
#undef SNOW_RAMP_G0
#undef SNOW_RAMP_G1
#undef SNOW_RAMP_G2
#undef SNOW_RAMP_G3
#undef SNOW_RAMP_G4
#undef SNOW_RAMP_B0
#undef SNOW_RAMP_B1
#undef SNOW_RAMP_B2
#undef SNOW_RAMP_B3
#undef SNOW_RAMP_B4
#endif

__device__ __forceinline__ bool circle_in_box_conservative(float4 c, float left, float right, float bottom,
                                                           float top) {
    return c.x + c.w >= left && c.x - c.w <= right && c.y + c.w >= bottom && c.y - c.w <= top;
}

__device__ __forceinline__ bool circle_in_box(float4 c, float left, float right, float bottom, float top) {
    const float nx = fminf(fmaxf(c.x, left), right);        // the box's point nearest the centre
    const float ny = fminf(fmaxf(c.y, bottom), top);
    const float dx = c.x - nx, dy = c.y - ny;
    return dx * dx + dy * dy <= c.w * c.w;
}
