// cuda-tiled's drawing path (cuda/tiled.py, TiledDrawingPath): the course's tiled design over a
// scene with drawing options (docs/drawing.md). One block per TILE_SIZE x TILE_SIZE tile, one
// thread per pixel; the block culls circles against its tile BLOCK_THREADS at a time by the
// reference's pixel box (a block scan compacts the hits in circle order, each hit's radii computed
// once, drawing.cuh's drawn_circle), then every thread blends the listed circles into its pixel,
// in order, each circle its fill and then its outline, exactly as the reference rounds (compiled
// --fmad=false). The image holds premultiplied colour and the output alpha; finish_drawing.cu
// makes straight colour. NumPy twin: circle_render/twins/render_tiled_drawing.py (bit for bit).
#include "drawing.cuh"
#include "scan.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
render_tiled_drawing(const float4* __restrict__ circles,     // (n,) x, y, z, r (picture units)
                     const float4* __restrict__ rgba,        // (n,) fill r, g, b, alpha
                     const float4* __restrict__ edge_rgba,   // (n,) edge r, g, b, alpha (DRAW_OUTLINED)
                     const float* __restrict__ edge_width,   // (n,) picture units (DRAW_OUTLINED)
                     int n,
                     float4* __restrict__ image,             // (height, width) P r, g, b, A
                     int width, int height) {
    __shared__ DrawnCircle staged[BLOCK_THREADS];
    __shared__ PixelBox boxes[BLOCK_THREADS];
    __shared__ int warp_sums[32];
    const int side = max(width, height);
    const float scale = (float)side, inv = 1.f / scale;
    const int tx0 = blockIdx.x * TILE_SIZE, ty0 = blockIdx.y * TILE_SIZE;
    const int tx1 = min(tx0 + TILE_SIZE, width), ty1 = min(ty0 + TILE_SIZE, height);
    const int x = tx0 + threadIdx.x % TILE_SIZE, y = ty0 + threadIdx.x / TILE_SIZE;
    const bool inside = x < width && y < height;
    const float px = pixel_centre(x, side), py = pixel_centre(y, side);
    float4 pixel = inside ? image[y * width + x] : make_float4(0.f, 0.f, 0.f, 0.f);

    for (int base = 0; base < n; base += BLOCK_THREADS) {
        const int i = base + threadIdx.x;
        int hit = 0;
        PixelBox b{0, 0, 0, 0};
        float4 c = make_float4(0.f, 0.f, 0.f, 0.f);
        float w = 0.f;
        if (i < n) {
            c = circles[i];
            if (kOutlined) w = edge_width[i];
            b = drawn_box(c, drawn_reach(c.w, w, inv), scale, width, height);
            hit = b.x0 < tx1 && b.x1 > tx0 && b.y0 < ty1 && b.y1 > ty0;
        }
        int count;
        const int slot = block_exclusive_scan<BLOCK_THREADS>(hit, count, warp_sums);
        if (hit) {
            const float4 edge = kOutlined ? edge_rgba[i] : make_float4(0.f, 0.f, 0.f, 0.f);
            staged[slot] = drawn_circle(c, kSnow ? make_float4(0.f, 0.f, 0.f, 0.f) : rgba[i], edge, w, scale);
            boxes[slot] = b;
        }
        __syncthreads();
        if (inside) {
            for (int k = 0; k < count; ++k) {
                const PixelBox kb = boxes[k];
                if (x < kb.x0 || x >= kb.x1 || y < kb.y0 || y >= kb.y1) continue;   // the reference's box
                const DrawnCircle& s = staged[k];
                const float d2 = dist2(s.c, px, py);
                const float dp = pixel_distance(s, d2, scale);
                float3 col;
                const float a = fill_layer(s, d2, dp, col);
                blend_over(pixel, a, col);
                if (kOutlined) {
                    const float e = edge_layer(s, d2, dp, col);
                    blend_over(pixel, e, col);
                }
            }
        }
        __syncthreads();   // the list is rewritten by the next chunk
    }
    if (inside) image[y * width + x] = pixel;
}
