// A course-style sort-by-tile renderer: what a student adds to the course's cudaRenderer.cu
// (written for this project in the course's style; not the course's code; the parts as in
// tiled_scan_course.cu). The port beside it, sort_by_tile.cu (kernels) and SortByTileRenderer
// in course_ports.py (host code), changes the lines listed in README.md.
//
// Every circle lists the 16 x 16 tiles its pixel box touches as (tile, circle) pairs; a stable
// sort by tile puts each tile's circles together, still in circle order; one block per tile
// then blends its circles into its pixels, one thread a pixel.
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#define TILE_DIM 16

// The tiles [tiles.x, tiles.y] x [tiles.z, tiles.w] that circle index's pixel box touches;
// false if the box holds no pixel.
__device__ __inline__ bool circleTiles(int index, int4& tiles) {
    const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
    const float rad = cuConstRendererParams.radius[index];
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    const int minX = min(max(static_cast<int>(imageWidth * (p.x - rad)), 0), imageWidth);
    const int maxX = min(max(static_cast<int>(imageWidth * (p.x + rad)) + 1, 0), imageWidth);
    const int minY = min(max(static_cast<int>(imageHeight * (p.y - rad)), 0), imageHeight);
    const int maxY = min(max(static_cast<int>(imageHeight * (p.y + rad)) + 1, 0), imageHeight);
    if (minX >= maxX || minY >= maxY) return false;
    tiles = make_int4(minX / TILE_DIM, (maxX - 1) / TILE_DIM, minY / TILE_DIM, (maxY - 1) / TILE_DIM);
    return true;
}

// tileCount[i]: how many tiles circle i touches.
__global__ void kernelCountTiles(int* tileCount) {
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= cuConstRendererParams.numCircles) return;
    int4 t;
    tileCount[index] = circleTiles(index, t) ? (t.y - t.x + 1) * (t.w - t.z + 1) : 0;
}

// Circle i writes its pairs at tileOffset[i] (the exclusive scan of tileCount), row by row.
__global__ void kernelEmitPairs(const int* tileOffset, int* pairTile, int* pairCircle) {
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= cuConstRendererParams.numCircles) return;
    const int tilesX = (cuConstRendererParams.imageWidth + TILE_DIM - 1) / TILE_DIM;
    int4 t;
    if (!circleTiles(index, t)) return;
    int slot = tileOffset[index];
    for (int ty = t.z; ty <= t.w; ty++) {
        for (int tx = t.x; tx <= t.y; tx++) {
            pairTile[slot] = ty * tilesX + tx;
            pairCircle[slot] = index;
            slot++;
        }
    }
}

// After the sort: tile k's circles are pairs [tileStart[k], tileEnd[k]) (both 0 when none).
// Keys of numTiles or more are padding and belong to no tile.
__global__ void kernelTileRanges(const int* sortedTile, int numPairs, int numTiles, int* tileStart, int* tileEnd) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= numPairs) return;
    const int tile = sortedTile[i];
    if (tile >= numTiles) return;
    if (i == 0 || sortedTile[i - 1] != tile) tileStart[tile] = i;
    if (i == numPairs - 1 || sortedTile[i + 1] != tile) tileEnd[tile] = i + 1;
}

// One TILE_DIM x TILE_DIM block per tile: each thread blends its tile's circles into its pixel.
__global__ void kernelRenderSortedTiles(const int* sortedCircle, const int* tileStart, const int* tileEnd) {
    const int imageWidth = cuConstRendererParams.imageWidth;
    const int imageHeight = cuConstRendererParams.imageHeight;
    const int pixelX = blockIdx.x * TILE_DIM + threadIdx.x;
    const int pixelY = blockIdx.y * TILE_DIM + threadIdx.y;
    if (pixelX >= imageWidth || pixelY >= imageHeight) return;
    const int tile = blockIdx.y * gridDim.x + blockIdx.x;
    const float2 pixelCenterNorm = make_float2((1.f / imageWidth) * (static_cast<float>(pixelX) + 0.5f),
                                               (1.f / imageHeight) * (static_cast<float>(pixelY) + 0.5f));
    float4* imgPtr = (float4*)(&cuConstRendererParams.imageData[4 * (pixelY * imageWidth + pixelX)]);
    float4 color = *imgPtr;
    for (int k = tileStart[tile]; k < tileEnd[tile]; k++) {
        const int index = sortedCircle[k];
        const float3 p = *(float3*)(&cuConstRendererParams.position[3 * index]);
        shadePixel(index, pixelCenterNorm, p, &color);
    }
    *imgPtr = color;
}

// The renderer's own buffers (a student may as well add members to CudaRenderer).
static int* cudaDeviceTileCount = NULL;     // tiles each circle touches
static int* cudaDeviceTileOffset = NULL;    // their exclusive scan: where each circle's pairs go
static int* cudaDeviceTileStart = NULL;     // tile k's pairs: [tileStart[k], tileEnd[k])
static int* cudaDeviceTileEnd = NULL;
static int tilesX = 0, tilesY = 0;

// ---- host: setup ----
    tilesX = (image->width + TILE_DIM - 1) / TILE_DIM;
    tilesY = (image->height + TILE_DIM - 1) / TILE_DIM;
    cudaMalloc(&cudaDeviceTileCount, sizeof(int) * numCircles);
    cudaMalloc(&cudaDeviceTileOffset, sizeof(int) * numCircles);
    cudaMalloc(&cudaDeviceTileStart, sizeof(int) * tilesX * tilesY);
    cudaMalloc(&cudaDeviceTileEnd, sizeof(int) * tilesX * tilesY);
// ---- host: render ----
    const int numTiles = tilesX * tilesY;
    kernelCountTiles<<<(numCircles + 255) / 256, 256>>>(cudaDeviceTileCount);
    thrust::device_ptr<int> count(cudaDeviceTileCount), offset(cudaDeviceTileOffset);
    thrust::exclusive_scan(count, count + numCircles, offset);
    const int numPairs = offset[numCircles - 1] + count[numCircles - 1];     // reads the GPU
    thrust::device_vector<int> pairTile(numPairs), pairCircle(numPairs);
    kernelEmitPairs<<<(numCircles + 255) / 256, 256>>>(cudaDeviceTileOffset,
        thrust::raw_pointer_cast(pairTile.data()), thrust::raw_pointer_cast(pairCircle.data()));
    thrust::stable_sort_by_key(pairTile.begin(), pairTile.end(), pairCircle.begin());
    cudaMemset(cudaDeviceTileStart, 0, sizeof(int) * numTiles);
    cudaMemset(cudaDeviceTileEnd, 0, sizeof(int) * numTiles);
    if (numPairs > 0)
        kernelTileRanges<<<(numPairs + 255) / 256, 256>>>(thrust::raw_pointer_cast(pairTile.data()),
            numPairs, numTiles, cudaDeviceTileStart, cudaDeviceTileEnd);
    kernelRenderSortedTiles<<<dim3(tilesX, tilesY), dim3(TILE_DIM, TILE_DIM)>>>(
        thrust::raw_pointer_cast(pairCircle.data()), cudaDeviceTileStart, cudaDeviceTileEnd);
    cudaDeviceSynchronize();
