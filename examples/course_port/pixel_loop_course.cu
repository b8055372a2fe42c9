// A course-style first correct renderer: one thread per pixel, every circle in index order (the
// handout's first rung). What a student adds to the course's cudaRenderer.cu (written for this
// project in the course's style; not the course's code; the parts as in tiled_scan_course.cu).
// The port beside it, pixel_loop.cu and PixelLoopRenderer in course_ports.py, changes the lines
// listed in README.md. Right by construction (one thread owns each pixel and walks the circles
// in order), and as slow as circles x pixels.
#define BLOCK_DIM 16

__global__ void kernelRenderPixels() {
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

// ---- host: setup ----
// ---- host: render ----
    dim3 blockDim(BLOCK_DIM, BLOCK_DIM);
    dim3 gridDim((image->width + BLOCK_DIM - 1) / BLOCK_DIM, (image->height + BLOCK_DIM - 1) / BLOCK_DIM);
    kernelRenderPixels<<<gridDim, blockDim>>>();
    cudaDeviceSynchronize();
