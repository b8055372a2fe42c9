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
//
// The host code does, call for call, what the port's does (cupy_calls.cuh: what its CuPy calls
// launch), so that the course's checker and render check time one program: buffers made once
// in setup; a still scene's list length read once there and its frame replayed as a CUDA graph
// (the port's use_graph); an animated scene's length read every frame, the list grown when it
// must. (A student's first version would call thrust::exclusive_scan and read the length every
// frame: thrust's temporaries are a cudaMalloc and cudaFree a call, which the course's checker
// charges and a CuPy port does not pay: docs/assignment.md, section 9.)

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

// ---- the host code: TileListsRenderer's in course_ports.py, call for call ----
#include "cupy_calls.cuh"

// The renderer's own state (a student may as well add members to CudaRenderer).
static int* cudaDeviceTileCount = NULL;       // circles touching each tile
static int* cudaDeviceTileInclusive = NULL;   // their inclusive scan ...
static int* cudaDeviceTileOffset = NULL;      // ... less the counts: where each tile's list starts
static int* cudaDeviceTileList = NULL;        // every tile's circles, tile after tile
static int tileListCapacity = 0;
static int tilesX = 0, tilesY = 0;
static DevicePool pool;                       // device memory kept and reused (CuPy's pool)
static cudaGraphExec_t frameGraph = NULL;     // a still scene's frame, captured in setup

// Count each tile's circles; scan the counts (cupy.cumsum, cupy.subtract) into the offsets.
static void countAndScan(cudaStream_t s) {
    const int numTiles = tilesX * tilesY;
    kernelCountTileCircles<<<dim3(tilesX, tilesY), dim3(TILE, TILE), 0, s>>>(cudaDeviceTileCount);
    cupyCumsum(cudaDeviceTileCount, cudaDeviceTileInclusive, numTiles, pool, s);
    cupySubtract(cudaDeviceTileInclusive, cudaDeviceTileCount, cudaDeviceTileOffset, numTiles, s);
}

// countAndScan, then the list's length (reads the GPU: a host sync).
static int countScanAndRead() {
    countAndScan(0);
    return readDeviceInt(cudaDeviceTileInclusive + tilesX * tilesY - 1);
}

static void fillAndBlend(cudaStream_t s) {
    const dim3 gridDim(tilesX, tilesY), blockDim(TILE, TILE);
    kernelFillTileLists<<<gridDim, blockDim, 0, s>>>(cudaDeviceTileOffset, cudaDeviceTileList);
    kernelRenderTileLists<<<gridDim, blockDim, 0, s>>>(cudaDeviceTileOffset, cudaDeviceTileCount, cudaDeviceTileList);
}

// A still scene's frame: its counts never change, so nothing is read.
static void stillFrame(cudaStream_t s) {
    countAndScan(s);
    fillAndBlend(s);
}

// ---- host: setup ----
    tilesX = (image->width + TILE - 1) / TILE;
    tilesY = (image->height + TILE - 1) / TILE;
    cudaDeviceTileCount = reinterpret_cast<int*>(pool.allocate(sizeof(int) * tilesX * tilesY));
    cudaDeviceTileInclusive = reinterpret_cast<int*>(pool.allocate(sizeof(int) * tilesX * tilesY));
    cudaDeviceTileOffset = reinterpret_cast<int*>(pool.allocate(sizeof(int) * tilesX * tilesY));
    tileListCapacity = std::max(countScanAndRead(), 1);
    cudaDeviceTileList = reinterpret_cast<int*>(pool.allocate(sizeof(int) * tileListCapacity));
    if (!(sceneName == SNOWFLAKES || sceneName == BOUNCING_BALLS || sceneName == HYPNOSIS || sceneName == FIREWORKS))
        frameGraph = captureFrame(stillFrame);              // a still scene: every frame the same launches
// ---- host: render ----
    if (frameGraph != NULL) {
        cudaCheck(cudaGraphLaunch(frameGraph, 0), "cudaGraphLaunch");
        return;
    }
    const int total = countScanAndRead();                   // an animated scene: the lists change
    if (total > tileListCapacity) {
        pool.deallocate(reinterpret_cast<char*>(cudaDeviceTileList));
        cudaDeviceTileList = reinterpret_cast<int*>(pool.allocate(sizeof(int) * total));
        tileListCapacity = total;
    }
    fillAndBlend(0);
    // no cudaDeviceSynchronize(): the harness synchronizes after render(), as render check
    // does after the port's draw()
