// A course-style renderer with per-tile lists in global memory: what a student adds to the
// course's cudaRenderer.cu (written for this project in the course's style; not the course's
// code; the parts as in tiled_scan_course.cu). The port beside it, tile_lists.cu (kernels) and
// TileListsRenderer in course_ports.py (host code), changes the lines listed in README.md.
//
// One 16 x 16 block per tile counts the circles that touch its tile, 256 at a time (the
// conservative test, then the exact one); the counts are scanned into each tile's offset in one
// list of all tiles' circles; the same blocks write their circles into their tile's part of it
// in circle order (the shared-memory scan gives each hit its place); then one block per tile
// blends its list into its pixels, one thread a pixel.
#include <thrust/device_ptr.h>
#include <thrust/scan.h>

#define TILE 16
#define TILE_THREADS (TILE * TILE)
#define SCAN_BLOCK_DIM TILE_THREADS
#include "exclusiveScan.cu_inl"
#include "circleBoxTest.cu_inl"

// Does circle index touch the tile [L, R] x [B, T] (normalised)?
__device__ __inline__ int circleTouchesTile(int index, float L, float R, float T, float B) {
    const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
    const float rad = cuConstRendererParams.radius[index];
    return circleInBoxConservative(p.x, p.y, rad, L, R, T, B) && circleInBox(p.x, p.y, rad, L, R, T, B);
}

// This block's tile in normalised coordinates (its pixels' edges).
__device__ __inline__ void tileBox(float& L, float& R, float& T, float& B) {
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    L = static_cast<float>(blockIdx.x * TILE) / imageWidth;
    R = static_cast<float>(min((blockIdx.x + 1) * TILE, imageWidth)) / imageWidth;
    B = static_cast<float>(blockIdx.y * TILE) / imageHeight;
    T = static_cast<float>(min((blockIdx.y + 1) * TILE, imageHeight)) / imageHeight;
}

// tileCount[tile]: how many circles touch the tile.
__global__ void kernelCountTileCircles(int* tileCount) {
    float L, R, T, B;
    tileBox(L, R, T, B);
    const int t = threadIdx.y * TILE + threadIdx.x;
    const int numCircles = cuConstRendererParams.numCircles;
    int count = 0;
    for (int base = 0; base < numCircles; base += TILE_THREADS) {
        const int index = base + t;
        count += __syncthreads_count(index < numCircles && circleTouchesTile(index, L, R, T, B));
    }
    if (t == 0) tileCount[blockIdx.y * gridDim.x + blockIdx.x] = count;
}

// The tile's circles, in circle order, at tileList[tileOffset[tile] ...].
__global__ void kernelFillTileLists(const int* tileOffset, int* tileList) {
    __shared__ uint hit[TILE_THREADS];
    __shared__ uint place[TILE_THREADS];
    __shared__ uint scratch[2 * TILE_THREADS];
    float L, R, T, B;
    tileBox(L, R, T, B);
    const int t = threadIdx.y * TILE + threadIdx.x;
    const int numCircles = cuConstRendererParams.numCircles;
    int* list = tileList + tileOffset[blockIdx.y * gridDim.x + blockIdx.x];
    int written = 0;
    for (int base = 0; base < numCircles; base += TILE_THREADS) {
        const int index = base + t;
        const uint touches = index < numCircles && circleTouchesTile(index, L, R, T, B);
        hit[t] = touches;
        __syncthreads();
        sharedMemExclusiveScan(t, hit, place, scratch, TILE_THREADS);
        __syncthreads();
        if (touches) list[written + place[t]] = index;
        written += place[TILE_THREADS - 1] + hit[TILE_THREADS - 1];
        __syncthreads();
    }
}

// One block per tile, one thread per pixel: blend the tile's list into the pixel.
__global__ void kernelRenderTileLists(const int* tileOffset, const int* tileCount, const int* tileList) {
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    const int pixelX = blockIdx.x * TILE + threadIdx.x;
    const int pixelY = blockIdx.y * TILE + threadIdx.y;
    if (pixelX >= imageWidth || pixelY >= imageHeight) return;
    const int tile = blockIdx.y * gridDim.x + blockIdx.x;
    const int* list = tileList + tileOffset[tile];
    const int count = tileCount[tile];
    const float2 pixelCenterNorm = make_float2((1.f / imageWidth) * (static_cast<float>(pixelX) + 0.5f),
                                               (1.f / imageHeight) * (static_cast<float>(pixelY) + 0.5f));
    float4* imgPtr = (float4*)(&cuConstRendererParams.imageData[4 * (pixelY * imageWidth + pixelX)]);
    float4 color = *imgPtr;
    for (int k = 0; k < count; k++) {
        const int index = list[k];
        const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
        shadePixel(index, pixelCenterNorm, p, &color);
    }
    *imgPtr = color;
}

// The renderer's own buffers (a student may as well add members to CudaRenderer).
static int* cudaDeviceTileCount = NULL;     // circles touching each tile
static int* cudaDeviceTileOffset = NULL;    // their exclusive scan: where each tile's list starts
static int* cudaDeviceTileList = NULL;      // every tile's circles, tile after tile
static int tileListCapacity = 0;
static int tilesX = 0, tilesY = 0;

// ---- host: setup ----
    tilesX = (image->width + TILE - 1) / TILE;
    tilesY = (image->height + TILE - 1) / TILE;
    cudaMalloc(&cudaDeviceTileCount, sizeof(int) * tilesX * tilesY);
    cudaMalloc(&cudaDeviceTileOffset, sizeof(int) * tilesX * tilesY);
// ---- host: render ----
    const int numTiles = tilesX * tilesY;
    dim3 gridDim(tilesX, tilesY), blockDim(TILE, TILE);
    kernelCountTileCircles<<<gridDim, blockDim>>>(cudaDeviceTileCount);
    thrust::device_ptr<int> count(cudaDeviceTileCount), offset(cudaDeviceTileOffset);
    thrust::exclusive_scan(count, count + numTiles, offset);
    int lastOffset, lastCount;                  // the list's length: reads the GPU
    cudaMemcpy(&lastOffset, cudaDeviceTileOffset + numTiles - 1, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&lastCount, cudaDeviceTileCount + numTiles - 1, sizeof(int), cudaMemcpyDeviceToHost);
    const int total = lastOffset + lastCount;
    if (total > tileListCapacity) {
        if (cudaDeviceTileList) cudaFree(cudaDeviceTileList);
        cudaMalloc(&cudaDeviceTileList, sizeof(int) * total);
        tileListCapacity = total;
    }
    kernelFillTileLists<<<gridDim, blockDim>>>(cudaDeviceTileOffset, cudaDeviceTileList);
    kernelRenderTileLists<<<gridDim, blockDim>>>(cudaDeviceTileOffset, cudaDeviceTileCount, cudaDeviceTileList);
    cudaDeviceSynchronize();
