// The walk path's one stage ("walk"; cuda/walk.py): scenes of few circles are not binned; one
// block per tile walks every circle with the tile walk (walk.cuh). Compiled once per shading
// (SNOW_SCENE). NumPy twin: circle_render/twins/walk.py.
#include "walk.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
walk(const float4* __restrict__ circles,   // (n,) x, y, z, r
     const float* __restrict__ colors,     // (n, 3)
     int n,
     float4* __restrict__ image,           // (height, width) RGBA
     const float4* __restrict__ rows,      // (height,) each row's clear colour
     int cleared,                          // 1: draw over rows, not over image
     int width, int height) {
    walk_tile<SNOW_SCENE != 0, false>(tile_of_block(), circles, colors, nullptr, 0, n, image, rows, cleared, width,
                                      height, false);
}
