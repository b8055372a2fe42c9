// pixel_loop_course.cu ported into the scaffold (README.md lists every line that changed).
//
// One thread per pixel, every circle in index order: right by construction, and as slow as
// circles x pixels.
#include "course_compat.cuh"
#define BLOCK_DIM 16

extern "C" __global__ void kernelRenderPixels() {
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    const int pixelX = blockIdx.x * BLOCK_DIM + threadIdx.x;
    const int pixelY = blockIdx.y * BLOCK_DIM + threadIdx.y;
    if (pixelX >= imageWidth || pixelY >= imageHeight) return;
    const float2 pixelCenterNorm = make_float2((1.f / imageWidth) * (static_cast<float>(pixelX) + 0.5f),
                                               (1.f / imageHeight) * (static_cast<float>(pixelY) + 0.5f));
    float4* imgPtr = (float4*)(&cuConstRendererParams.imageData[4 * (pixelY * imageWidth + pixelX)]);
    float4 color = *imgPtr;
    const int numCircles = cuConstRendererParams.numCircles;
    for (int index = 0; index < numCircles; index++) {
        const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
        shadePixel(index, pixelCenterNorm, p, &color);
    }
    *imgPtr = color;
}

// Host side: PixelLoopRenderer.draw in course_ports.py.
