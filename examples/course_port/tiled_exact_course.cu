// A course-style tiled renderer after the CMU 15-418 handout's hints: what a student adds to the
// course's cudaRenderer.cu (written for this project in the course's style; not the course's
// code; the parts as in tiled_scan_course.cu). The port beside it, tiled_exact.cu and
// TiledExactRenderer in course_ports.py, changes the lines listed in README.md.
//
// One 32 x 32 block (1024 threads) per tile. The block tests 1024 circles at a time against its
// tile, the conservative test first and the exact one only where it passes, compacts the hits
// with the shared-memory scan (1024 wide), and each thread blends them into its pixel. The
// shading is decided once on the host from the scene (the course's shadePixel decides it for
// every circle and pixel): a kernel for the snow scenes and one for the rest, from one template.
#define TILE 32
#define THREADS (TILE * TILE)
#define SCAN_BLOCK_DIM THREADS
#include "exclusiveScan.cu_inl"
#include "circleBoxTest.cu_inl"

// Blend circle index into color if it covers the pixel centre c.
template <bool SNOW>
__device__ __inline__ void blendCircle(int index, float2 c, float4& color) {
    const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
    const float rad = cuConstRendererParams.radius[index];
    const float diffX = p.x - c.x, diffY = p.y - c.y;
    const float pixelDist = diffX * diffX + diffY * diffY;
    if (pixelDist > rad * rad) return;
    float3 rgb;
    float alpha;
    if (SNOW) {
        const float normPixelDist = sqrtf(pixelDist) / rad;
        rgb = lookupColor(normPixelDist);
        float maxAlpha = .6f + .4f * (1.f - p.z);
        maxAlpha = .5f * fmaxf(fminf(maxAlpha, 1.f), 0.f);
        alpha = maxAlpha * expf(-1.f * 4.f * normPixelDist * normPixelDist);
    } else {
        rgb = *(float3*)&(cuConstRendererParams.color[3 * index]);
        alpha = .5f;
    }
    const float oneMinusAlpha = 1.f - alpha;
    color.x = alpha * rgb.x + oneMinusAlpha * color.x;
    color.y = alpha * rgb.y + oneMinusAlpha * color.y;
    color.z = alpha * rgb.z + oneMinusAlpha * color.z;
    color.w = alpha + color.w;
}

template <bool SNOW>
__global__ void __launch_bounds__(THREADS) kernelRenderTiles() {
    __shared__ uint circleHit[THREADS];
    __shared__ uint hitIndex[THREADS];
    __shared__ uint scratch[2 * THREADS];
    __shared__ int hitList[THREADS];

    const int t = threadIdx.y * TILE + threadIdx.x;
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    const float invWidth = 1.f / imageWidth, invHeight = 1.f / imageHeight;
    const int tileX = blockIdx.x * TILE, tileY = blockIdx.y * TILE;
    const float boxL = invWidth * tileX, boxR = invWidth * min(tileX + TILE, imageWidth);
    const float boxB = invHeight * tileY, boxT = invHeight * min(tileY + TILE, imageHeight);

    const int pixelX = tileX + threadIdx.x, pixelY = tileY + threadIdx.y;
    const bool inImage = pixelX < imageWidth && pixelY < imageHeight;
    const float2 pixelCenterNorm = make_float2(invWidth * (static_cast<float>(pixelX) + 0.5f),
                                               invHeight * (static_cast<float>(pixelY) + 0.5f));
    float4* imgPtr = (float4*)(&cuConstRendererParams.imageData[4 * (pixelY * imageWidth + pixelX)]);
    float4 color = inImage ? *imgPtr : make_float4(0.f, 0.f, 0.f, 0.f);

    const int numCircles = cuConstRendererParams.numCircles;
    for (int base = 0; base < numCircles; base += THREADS) {
        const int index = base + t;
        uint hit = 0;
        if (index < numCircles) {
            const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
            const float rad = cuConstRendererParams.radius[index];
            hit = circleInBoxConservative(p.x, p.y, rad, boxL, boxR, boxT, boxB)
               && circleInBox(p.x, p.y, rad, boxL, boxR, boxT, boxB);
        }
        circleHit[t] = hit;
        __syncthreads();
        sharedMemExclusiveScan(t, circleHit, hitIndex, scratch, THREADS);
        __syncthreads();
        if (hit) hitList[hitIndex[t]] = index;
        const int numHits = hitIndex[THREADS - 1] + circleHit[THREADS - 1];
        __syncthreads();
        if (inImage)
            for (int k = 0; k < numHits; k++) blendCircle<SNOW>(hitList[k], pixelCenterNorm, color);
        __syncthreads();
    }
    if (inImage) *imgPtr = color;
}

// ---- host: setup ----
// ---- host: render ----
    dim3 blockDim(TILE, TILE);
    dim3 gridDim((image->width + TILE - 1) / TILE, (image->height + TILE - 1) / TILE);
    if (sceneName == SNOWFLAKES || sceneName == SNOWFLAKES_SINGLE_FRAME)
        kernelRenderTiles<true><<<gridDim, blockDim>>>();
    else
        kernelRenderTiles<false><<<gridDim, blockDim>>>();
    // no cudaDeviceSynchronize(): the harness synchronizes after render(), as render check
    // does after the port's draw()
