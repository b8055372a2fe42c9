// The course's starter design, wrong on purpose: one thread per circle, each blending every
// pixel of its box straight into the image in global memory. Where circles overlap, two
// threads read, blend and write the same pixel at the same time (one update is lost), and
// whichever thread comes last wins, whatever the circles' order. Fixing both is the
// assignment (docs/assignment.md). NumPy twin: circle_render/twins/starter.py.
#include "shade.cuh"

extern "C" __global__ void render_starter(const float4* __restrict__ circles, const float* __restrict__ colors,
                                          int n, float4* image, int width, int height, int snow) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float4 c = circles[i];
    const PixelBox b = circle_box(c, width, height);
    for (int y = b.y0; y < b.y1; ++y) {
        const float py = pixel_centre(y, height);
        for (int x = b.x0; x < b.x1; ++x) {
            float4 p = image[y * width + x];                         // read ...
            shade_pixel(p, c, colors, i, pixel_centre(x, width), py, snow);
            image[y * width + x] = p;                                // ... and write back: a race
        }
    }
}
