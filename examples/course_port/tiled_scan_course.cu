// A course-style tiled renderer: what a student adds to the course's cudaRenderer.cu (written
// for this project in the course's style; not the course's code). Its kernels sit after the
// course's own; the code after "host: setup" ends CudaRenderer::setup(), and the code after
// "host: render" is the body of CudaRenderer::render() (benchmarks/course_splice.py makes the
// whole file from these parts for the course's harness). The port beside it, tiled_scan.cu
// and TiledScanRenderer in course_ports.py, changes the lines listed in README.md.
//
// One 16 x 16 block per tile, one thread per pixel. The block tests 256 circles at a time
// against its tile (one a thread), compacts the hits in circle order with a shared-memory
// exclusive scan, and every thread blends the hits into its pixel, kept in a register.
#define BLOCK_DIM 16
#define BLOCKSIZE (BLOCK_DIM * BLOCK_DIM)
#define SCAN_BLOCK_DIM BLOCKSIZE    // the course's scan wants it defined before its header
#include "exclusiveScan.cu_inl"
#include "circleBoxTest.cu_inl"

__global__ void kernelRenderTiles() {
    __shared__ uint circleHit[BLOCKSIZE];
    __shared__ uint hitIndex[BLOCKSIZE];
    __shared__ uint scratch[2 * BLOCKSIZE];
    __shared__ int hitList[BLOCKSIZE];

    const int linearThreadIndex = threadIdx.y * BLOCK_DIM + threadIdx.x;
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    const float invWidth = 1.f / imageWidth;
    const float invHeight = 1.f / imageHeight;

    // the tile, in normalised coordinates (its pixels' edges: a superset of their centres)
    const int tileX = blockIdx.x * BLOCK_DIM, tileY = blockIdx.y * BLOCK_DIM;
    const float boxL = invWidth * tileX;
    const float boxR = invWidth * min(tileX + BLOCK_DIM, imageWidth);
    const float boxB = invHeight * tileY;
    const float boxT = invHeight * min(tileY + BLOCK_DIM, imageHeight);

    const int pixelX = tileX + threadIdx.x, pixelY = tileY + threadIdx.y;
    const bool inImage = pixelX < imageWidth && pixelY < imageHeight;
    const float2 pixelCenterNorm = make_float2(invWidth * (static_cast<float>(pixelX) + 0.5f),
                                               invHeight * (static_cast<float>(pixelY) + 0.5f));
    float4* imgPtr = (float4*)(&cuConstRendererParams.imageData[4 * (pixelY * imageWidth + pixelX)]);
    float4 color = inImage ? *imgPtr : make_float4(0.f, 0.f, 0.f, 0.f);

    const int numCircles = cuConstRendererParams.numCircles;
    for (int base = 0; base < numCircles; base += BLOCKSIZE) {
        const int circleIndex = base + linearThreadIndex;
        uint hit = 0;
        if (circleIndex < numCircles) {
            const float3 p = *(float3*)(&cuConstRendererParams.position[3 * circleIndex]);
            const float rad = cuConstRendererParams.radius[circleIndex];
            hit = circleInBoxConservative(p.x, p.y, rad, boxL, boxR, boxT, boxB);
        }
        circleHit[linearThreadIndex] = hit;
        __syncthreads();
        sharedMemExclusiveScan(linearThreadIndex, circleHit, hitIndex, scratch, BLOCKSIZE);
        __syncthreads();
        if (hit) hitList[hitIndex[linearThreadIndex]] = circleIndex;
        const int numHits = hitIndex[BLOCKSIZE - 1] + circleHit[BLOCKSIZE - 1];
        __syncthreads();
        if (inImage) {
            for (int k = 0; k < numHits; k++) {
                const int index = hitList[k];
                const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
                shadePixel(index, pixelCenterNorm, p, &color);
            }
        }
        __syncthreads();        // hitList is rewritten by the next chunk
    }
    if (inImage) *imgPtr = color;
}

// ---- host: setup ----
// ---- host: render ----
    dim3 blockDim(BLOCK_DIM, BLOCK_DIM);
    dim3 gridDim((image->width + BLOCK_DIM - 1) / BLOCK_DIM, (image->height + BLOCK_DIM - 1) / BLOCK_DIM);
    kernelRenderTiles<<<gridDim, blockDim>>>();
    // no cudaDeviceSynchronize(): the harness synchronizes after render(), as render check
    // does after the port's draw()
