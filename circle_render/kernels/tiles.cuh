// Tile geometry shared by the fast renderer's stages: circles' pixel boxes in tiles, packed
// into 32 bits, and which tile a block draws.
#pragma once
#include "shade.cuh"

constexpr unsigned FULL = 0xffffffffu;               // every lane of a warp

// Packed tile boxes: bytes (x0, x1, y0, y1), inclusive tile indices, so images of up to 256
// tiles a side. A circle whose pixel box is empty covers no pixel: NO_TILES.
__device__ __forceinline__ unsigned pack_tile_box(float4 c, int width, int height) {
    const PixelBox b = circle_box(c, width, height);
    if (b.x0 >= b.x1 || b.y0 >= b.y1) return NO_TILES;
    return (unsigned)(b.x0 / FAST_TILE) | (unsigned)((b.x1 - 1) / FAST_TILE) << 8 |
           (unsigned)(b.y0 / FAST_TILE) << 16 | (unsigned)((b.y1 - 1) / FAST_TILE) << 24;
}

// tile = (tx, tx, ty, ty) in bytes. Per byte: tx >= x0, x1 >= tx, ty >= y0, y1 >= ty.
__device__ __forceinline__ bool box_has_tile(unsigned box, unsigned tile) {
    return __vcmpgeu4(__byte_perm(tile, box, 0x7250), __byte_perm(tile, box, 0x3614)) == FULL;
}

// Which tile block b draws. TILE_ORDER 1 starts the image's border ring first, 2 goes ring by
// ring from the border in: coverage thins out towards the border, so that is where walks are
// longest (benchmarks/block_profile.py), and a long walk that starts in the last wave sets
// the kernel's time. Within a ring: top row, bottom row, left column, right column.
__device__ __forceinline__ int2 tile_of_block() {
    const int gx = gridDim.x, gy = gridDim.y;
    int b = blockIdx.y * gx + blockIdx.x;
    if (TILE_ORDER == 0) return make_int2(b % gx, b / gx);
    int r = 0, w = gx, h = gy;          // ring r: the border of a w x h grid at (r, r)
    for (; TILE_ORDER == 2 && w > 2 && h > 2 && b >= 2 * (w + h) - 4; ++r, w -= 2, h -= 2)
        b -= 2 * (w + h) - 4;
    if (w <= 2 || h <= 2) return make_int2(r + b % w, r + b / w);
    if (b < w) return make_int2(r + b, r);
    if ((b -= w) < w) return make_int2(r + b, r + h - 1);
    if ((b -= w) < h - 2) return make_int2(r, r + 1 + b);
    if ((b -= h - 2) < h - 2) return make_int2(r + w - 1, r + 1 + b);
    b -= h - 2;
    return make_int2(r + 1 + b % (w - 2), r + 1 + b / (w - 2));
}
