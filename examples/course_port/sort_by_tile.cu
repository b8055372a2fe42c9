// sort_by_tile_course.cu ported into the scaffold (README.md lists every line that changed).
//
// Every circle lists the 16 x 16 tiles its pixel box touches as (tile, circle) pairs; a stable
// sort by tile puts each tile's circles together, still in circle order; one block per tile
// then blends its circles into its pixels, one thread a pixel.

#include "course_compat.cuh"

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
extern "C" __global__ void kernelCountTiles(int* tileCount) {
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= cuConstRendererParams.numCircles) return;
    int4 t;
    tileCount[index] = circleTiles(index, t) ? (t.y - t.x + 1) * (t.w - t.z + 1) : 0;
}

// Circle i writes its pairs at tileOffset[i] (the exclusive scan of tileCount), row by row.
extern "C" __global__ void kernelEmitPairs(const int* tileOffset, int* pairTile, int* pairCircle) {
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
extern "C" __global__ void kernelTileRanges(const int* sortedTile, int numPairs, int numTiles, int* tileStart, int* tileEnd) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= numPairs) return;
    const int tile = sortedTile[i];
    if (tile >= numTiles) return;
    if (i == 0 || sortedTile[i - 1] != tile) tileStart[tile] = i;
    if (i == numPairs - 1 || sortedTile[i + 1] != tile) tileEnd[tile] = i + 1;
}

// One TILE_DIM x TILE_DIM block per tile: each thread blends its tile's circles into its pixel.
extern "C" __global__ void kernelRenderSortedTiles(const int* sortedCircle, const int* tileStart, const int* tileEnd) {
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

// Host side: SortByTileRenderer in course_ports.py.
