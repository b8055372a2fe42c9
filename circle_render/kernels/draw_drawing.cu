// The fast renderer's drawing path, its draw stage ("draw_drawing"; cuda/drawn.py): one block a
// FAST_TILE x FAST_TILE tile walks its supertile's list (bin.cu over the circles' drawing boxes,
// on the S x S picture) from the last entry to the first, BLOCK_THREADS a step: the step's
// entries whose packed box holds the tile are compacted in order (a block scan; front first),
// each hit's radii computed once (drawing.cuh), and every thread composites its PIXELS pixels
// front to back, each circle its outline and then its fill, until every pixel of the tile has
// T < T_EPS. When the lists were cut short (capacity), the tile tests every circle's box itself.
// "Over" is associative: this is serial blending up to rounding and what a finished pixel's
// circles behind would still add (at most T_EPS * the largest colour). The coverage and each
// layer's alpha are the reference's bit for bit (drawing.cuh). NumPy twin:
// circle_render/twins/draw_drawing.py.
#include "drawing.cuh"
#include "scan.cuh"
#include "tiles.cuh"

constexpr int DRAWN_PIXELS = FAST_TILE * FAST_TILE / BLOCK_THREADS;    // pixels a thread
constexpr int DRAWN_ROWS = BLOCK_THREADS / FAST_TILE;                  // rows between a thread's pixels
static_assert(FAST_TILE * FAST_TILE % BLOCK_THREADS == 0 && BLOCK_THREADS % FAST_TILE == 0,
              "a tile is whole rows of threads, whole pixels a thread");

// One layer composited behind what is in front: acc += T * a * c, accA += T * a, T *= 1 - a.
__device__ __forceinline__ void composite_behind(float4& acc, float& T, float a, float3 col) {
    if (!(a > 0.f)) return;
    const float w = T * a;
    acc.x = fmaf(w, col.x, acc.x);
    acc.y = fmaf(w, col.y, acc.y);
    acc.z = fmaf(w, col.z, acc.z);
    acc.w += w;
    T = fmaf(-a, T, T);
}

__device__ __forceinline__ bool any_open_pixel(const float (&T)[DRAWN_PIXELS]) {
    bool open = false;
#pragma unroll
    for (int p = 0; p < DRAWN_PIXELS; ++p) open |= T[p] >= T_EPS;
    return open;
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
draw_drawing(const float4* __restrict__ circles,     // (n,) x, y, z, r (picture units)
             const float4* __restrict__ boxes,       // (n,) x, y, z, reach: the pixel box's (bin.cu binned these)
             const float4* __restrict__ rgba,        // (n,) fill r, g, b, alpha
             const float4* __restrict__ edge_rgba,   // (n,) edge r, g, b, alpha (DRAW_OUTLINED)
             const float* __restrict__ edge_width,   // (n,) picture units (DRAW_OUTLINED)
             int n,
             const uint2* __restrict__ list,         // (capacity,) (circle index, packed tile box), bin.cu
             const int* __restrict__ starts,         // (SUPERTILES + 1,) where each list starts; then all
             int capacity,                           // entries list holds (more: test every circle)
             int tiles_per_super,                    // supertile side in tiles, a power of two
             float4* __restrict__ image,             // (height, width) P r, g, b, A
             const float4* __restrict__ rows,        // (height,) each row's clear (P, A)
             int cleared,                            // 1: draw over rows, not over image
             int width, int height) {
    __shared__ DrawnCircle staged[BLOCK_THREADS];
    __shared__ int warp_sums[32];
    const int side = max(width, height);
    const float scale = (float)side;
    const int2 t = tile_of_block();
    const int x = t.x * FAST_TILE + (int)threadIdx.x % FAST_TILE;
    const int y0 = t.y * FAST_TILE + (int)threadIdx.x / FAST_TILE;
    const float px = pixel_centre(x, side);
    float py[DRAWN_PIXELS], T[DRAWN_PIXELS];
    float4 acc[DRAWN_PIXELS];
#pragma unroll
    for (int p = 0; p < DRAWN_PIXELS; ++p) {
        const int y = y0 + p * DRAWN_ROWS;
        py[p] = pixel_centre(y, side);
        T[p] = x < width && y < height ? 1.f : 0.f;     // a pixel outside the picture is finished
        acc[p] = make_float4(0.f, 0.f, 0.f, 0.f);
    }

    const bool listed = starts[SUPERTILES] <= capacity;
    int begin = 0, end = n;
    if (listed) {
        const int shift = __ffs(tiles_per_super) - 1;
        const int s = (t.y >> shift) * SUPER_GRID + (t.x >> shift);
        begin = starts[s];
        end = starts[s + 1];
    }
    const unsigned key = tile_key(t.x & 255, t.y & 255);
    const int tx0 = t.x * FAST_TILE, ty0 = t.y * FAST_TILE;
    for (int top = end; top > begin; top -= BLOCK_THREADS) {
        const int k = top - 1 - (int)threadIdx.x;        // thread 0 takes the last: front first
        int hit = 0, i = k;
        if (k >= begin) {
            if (listed) {
                const uint2 e = list[k];
                i = (int)e.x;
                hit = box_has_tile(e.y, key);
            } else {
                const PixelBox b = circle_box(boxes[k], side, side);
                hit = b.x0 < min(tx0 + FAST_TILE, width) && b.x1 > tx0 && b.y0 < min(ty0 + FAST_TILE, height)
                      && b.y1 > ty0;
            }
        }
        int count;
        const int slot = block_exclusive_scan<BLOCK_THREADS>(hit, count, warp_sums);
        if (hit) {
            const float4 edge = kOutlined ? edge_rgba[i] : make_float4(0.f, 0.f, 0.f, 0.f);
            const float w = kOutlined ? edge_width[i] : 0.f;
            DrawnCircle d = drawn_circle(circles[i], kSnow ? make_float4(0.f, 0.f, 0.f, 0.f) : rgba[i], edge, w,
                                         scale);
            const float reach = boxes[i].w;
            d.far = reach * reach * REACH_MARGIN;     // beyond: no layer reaches the pixel
            staged[slot] = d;
        }
        __syncthreads();
        bool open = any_open_pixel(T);
        for (int j = 0; j < count && open; ++j) {
            const DrawnCircle& s = staged[j];
#pragma unroll
            for (int p = 0; p < DRAWN_PIXELS; ++p) {
                const float d2 = dist2(s.c, px, py[p]);
                if (T[p] >= T_EPS && d2 <= s.far) {
                    const float dp = pixel_distance(s, d2, scale);
                    float3 col;
                    if (kOutlined) composite_behind(acc[p], T[p], edge_layer(s, d2, dp, col), col);
                    const float a = fill_layer(s, d2, dp, col);
                    composite_behind(acc[p], T[p], a, col);
                }
            }
            open = any_open_pixel(T);
        }
        if (__syncthreads_and(!open)) break;     // also guards `staged` before the next step
    }
    // Write-out: the composited layers over what is behind (each row's clear, or the image).
#pragma unroll
    for (int p = 0; p < DRAWN_PIXELS; ++p) {
        const int y = y0 + p * DRAWN_ROWS;
        if (x >= width || y >= height) continue;
        const float4 b = cleared ? rows[y] : image[y * width + x];
        const float alpha = kOpaque ? 1.f : fmaf(T[p], b.w, acc[p].w);
        image[y * width + x] = make_float4(fmaf(T[p], b.x, acc[p].x), fmaf(T[p], b.y, acc[p].y),
                                           fmaf(T[p], b.z, acc[p].z), alpha);
    }
}
