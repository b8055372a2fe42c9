// Your render kernel. As given, it is the course's starter: one thread per circle, blending
// its pixel box straight into the image. It is fast only where circles are small (one thread
// walks a big circle's whole box) and wrong where circles overlap (on a GPU machine, run
// `render check -r assignment/my_renderer.py:StudentRenderer` to see where; without a GPU,
// `render compile assignment/my_renderer.py` checks that it compiles). Make it right (pixels
// updated one at a time, circles in index order), then fast: docs/assignment.md.
//
// helpers.cuh (circle_render/kernels/helpers.cuh) documents what it gives you: circle boxes,
// pixel centres, circle-against-box tests, block scans and shade_pixel for both scene kinds.
#include "helpers.cuh"

// circles: n float4 (x, y, z, radius), colors: 3n floats, image: height x width float4
// (r, g, b, a; row 0 at the bottom), snow: 1 for the snow scenes' shading.
extern "C" __global__ void render_circles(const float4* __restrict__ circles, const float* __restrict__ colors,
                                          int n, float4* image, int width, int height, int snow) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float4 c = circles[i];
    const PixelBox b = circle_box(c, width, height);
    for (int y = b.y0; y < b.y1; ++y) {
        const float py = pixel_centre(y, height);
        for (int x = b.x0; x < b.x1; ++x) {
            float4 p = image[y * width + x];
            shade_pixel(p, c, colors, i, pixel_centre(x, width), py, snow);
            image[y * width + x] = p;
        }
    }
}
