// Tile geometry shared by the fast renderer's stages: circles' pixel boxes in tiles (packed into
// 32 bits relative to a supertile for the lists), and which tile a block draws.
#pragma once
#include "shade.cuh"

constexpr unsigned FULL = 0xffffffffu;               // every lane of a warp

// A circle's pixel box in tiles of `tile` pixels: inclusive tile indices, x0 > x1 when the
// pixel box is empty (the circle covers no pixel).
struct TileBox { int x0, x1, y0, y1; };

__device__ __forceinline__ TileBox tile_box(float4 c, int width, int height, int tile) {
    const PixelBox b = circle_box(c, width, height);
    if (b.x0 >= b.x1 || b.y0 >= b.y1) return {1, 0, 1, 0};
    return {b.x0 / tile, (b.x1 - 1) / tile, b.y0 / tile, (b.y1 - 1) / tile};
}

// A tile box seen from a cell (a supertile) of `cells` x `cells` tiles whose first tile is
// (cx, cy): clamped to the cell, and its tile indices modulo 256 packed as bytes (x0, x1, y0,
// y1). Cells are a power of two tiles a side, at most 256, and start at multiples of their
// side, so no cell straddles a multiple of 256 and the bytes compare exactly with the key of
// any tile of the cell, tile_key(tx & 255, ty & 255): images of any size. Only boxes that
// touch the cell are packed.
__device__ __forceinline__ unsigned pack_in_cell(TileBox b, int cx, int cy, int cells) {
    const int x0 = max(b.x0, cx) & 255, x1 = min(b.x1, cx + cells - 1) & 255;
    const int y0 = max(b.y0, cy) & 255, y1 = min(b.y1, cy + cells - 1) & 255;
    return (unsigned)x0 | (unsigned)x1 << 8 | (unsigned)y0 << 16 | (unsigned)y1 << 24;
}

// The key of tile (tx, ty) (each under 256) for box_has_tile: (tx, tx, ty, ty) in bytes.
__device__ __forceinline__ unsigned tile_key(int tx, int ty) {
    return (unsigned)tx * 0x0101u | (unsigned)ty * 0x01010000u;
}

// Does a packed box hold the tile of this key? Per byte: tx >= x0, x1 >= tx, ty >= y0, y1 >= ty.
__device__ __forceinline__ bool box_has_tile(unsigned box, unsigned tile) {
    return __vcmpgeu4(__byte_perm(tile, box, 0x7250), __byte_perm(tile, box, 0x3614)) == FULL;
}

// Does a circle reach the rectangle [x0, x1] x [y0, y1] of pixel centres? The distance from
// its centre to the rectangle against its radius, with a margin for rounding: never false for
// a circle that covers one of those pixels (tighter than its box; a few extra are harmless).
__device__ __forceinline__ bool reaches(float4 c, float x0, float x1, float y0, float y1) {
    const float dx = fmaxf(fmaxf(x0 - c.x, c.x - x1), 0.f);
    const float dy = fmaxf(fmaxf(y0 - c.y, c.y - y1), 0.f);
    return dx * dx + dy * dy <= c.w * c.w * REACH_MARGIN;
}

// b / d and b % d for 0 <= b < 2^20 and d > 0 in about 10 instructions (an integer division
// by a runtime d takes about 25): the fast float quotient is within a quarter of the true one
// (2 ulp), so its truncation is off by at most one, which the remainder corrects.
__device__ __forceinline__ int2 div_mod(int b, int d) {
    int q = (int)__fdividef((float)b, (float)d);
    int r = b - q * d;
    if (r < 0) --q, r += d;
    else if (r >= d) ++q, r -= d;
    return make_int2(q, r);
}

// Which tile block b draws: the image's border ring first (top row, bottom row, left column,
// right column), then the rest row by row. Coverage thins out towards the border, so that is
// where walks are longest, and a long walk that starts in the last wave sets the kernel's time.
// NumPy twin: circle_render/twins/tiles.py, tile_order.
__device__ __forceinline__ int2 tile_of_block() {
    const int w = gridDim.x, h = gridDim.y;
    int b = blockIdx.y * w + blockIdx.x;
    if (w <= 2 || h <= 2) return make_int2(blockIdx.x, blockIdx.y);
    if (b < w) return make_int2(b, 0);
    if ((b -= w) < w) return make_int2(b, h - 1);
    if ((b -= w) < h - 2) return make_int2(0, 1 + b);
    if ((b -= h - 2) < h - 2) return make_int2(w - 1, 1 + b);
    const int2 qr = div_mod(b - (h - 2), w - 2);
    return make_int2(1 + qr.y, 1 + qr.x);
}
