// Helpers for the assignment (docs/assignment.md): include them from your kernel with
//     #include "helpers.cuh"
// Everything here is what the project's own renderers use; tests/test_assignment_gpu.py tests
// each one against NumPy. Constants (FLAT_ALPHA, SNOW_*, ...) come from
// circle_render/constants.py as compile options, as for every kernel.
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
// Scans (scan.cuh), one value per thread:
//   T warp_inclusive_scan(T value)
//   T block_exclusive_scan<THREADS>(T value, T& total, T* warp_sums)
//       Every thread of a THREADS-thread block calls it; warp_sums is __shared__ T[32]. Returns
//       the sum of the values of the threads before this one and sets total to the block's
//       sum. It synchronizes the block (__syncthreads) inside.
//
// Shading (shade.cuh), both scene kinds:
//   void shade_pixel(float4& pixel, float4 c, const float* colors, int i, float px, float py, bool snow)
//       Blends circle i (its centre and radius c, its colour colors[3i..3i+2]) into pixel, an
//       (r, g, b, a) value, if it covers the pixel centre (px, py): flat scenes with alpha 1/2,
//       snow scenes (snow = true) with the course's snow shading. The pixel must be updated by
//       one thread at a time, and the circles must come in index order.
#pragma once
#include "shade.cuh"
#include "scan.cuh"

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
