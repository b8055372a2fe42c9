// The fast renderer, in two stages.
//
// 1. Binning (scenes with many circles): each circle is listed under every supertile (one of
//    SUPER_GRID x SUPER_GRID) that its pixel box touches, in circle order. Count per
//    (chunk of circles, supertile), exclusive scan, emit: each warp ranks its 32 circles with
//    a ballot, so the lists come out ordered without any sort.
// 2. Per tile (TILE_SIZE x TILE_SIZE pixels, one thread per pixel): walk the supertile's list
//    (or every circle) from the LAST circle to the first, cull against the tile BLOCK_THREADS at
//    a time, composite front to back with transmittance T, and stop once every pixel of the
//    tile has T < T_EPS. "Over" is associative, so this equals serial blending up to rounding
//    and the at most T_EPS * max colour that the circles behind a finished pixel would add.
#include "shade.cuh"
#include "scan.cuh"

constexpr int SUPERTILES = SUPER_GRID * SUPER_GRID;
constexpr int BIN_WARPS = BIN_THREADS / 32;
constexpr int LANE_SLOTS = (SUPERTILES + 31) / 32;   // per-supertile counters each lane holds
constexpr unsigned FULL = 0xffffffffu;

// Inclusive range of supertiles touched by a circle's pixel box; empty (x0 > x1) when the box
// is empty, i.e. the circle covers no pixel centre of the image.
struct SuperRange { int x0, x1, y0, y1; };

__device__ __forceinline__ SuperRange super_range(float4 c, bool valid, int width, int height,
                                                  int super_px) {
    SuperRange r = {1, 0, 1, 0};
    if (valid) {
        PixelBox b = circle_box(c, width, height);
        if (b.x0 < b.x1 && b.y0 < b.y1)
            r = {b.x0 / super_px, (b.x1 - 1) / super_px, b.y0 / super_px, (b.y1 - 1) / super_px};
    }
    return r;
}

// Walks a warp's BIN_ITEMS * 32 circles from `first`, 32 at a time, loading the next 32 while
// the current ones are binned; calls visit(i, range) with lane's circle i of each group.
template <class Visit>
__device__ __forceinline__ void for_each_circle_group(const float4* __restrict__ circles, int n,
                                                      int first, int width, int height,
                                                      int super_px, Visit visit) {
    const int lane = threadIdx.x & 31;
    float4 next = first + lane < n ? circles[first + lane] : make_float4(0.f, 0.f, 0.f, 0.f);
    for (int it = 0; it < BIN_ITEMS && first + it * 32 < n; ++it) {
        const int i = first + it * 32 + lane;
        const float4 c = next;
        if (it + 1 < BIN_ITEMS && i + 32 < n) next = circles[i + 32];
        visit(i, super_range(c, i < n, width, height, super_px));
    }
}

// For each supertile s touched by any of the warp's 32 circles, in increasing s, call
// visit(s, hits), where bit l of hits says whether lane l's circle touches s.
template <class Visit>
__device__ __forceinline__ void for_each_supertile(SuperRange r, Visit visit) {
#pragma unroll
    for (int sy = 0; sy < SUPER_GRID; ++sy) {
        const bool row = r.y0 <= sy && sy <= r.y1;
        if (!__any_sync(FULL, row)) continue;
#pragma unroll
        for (int sx = 0; sx < SUPER_GRID; ++sx) {
            const unsigned hits = __ballot_sync(FULL, row && r.x0 <= sx && sx <= r.x1);
            if (hits) visit(sy * SUPER_GRID + sx, hits);
        }
    }
}

// Block b handles circles [b * BIN_CHUNK, (b + 1) * BIN_CHUNK), each warp BIN_ITEMS * 32 of
// them. Writes counts[s * chunks + b] (circles of the chunk touching s) and, for the emit
// kernel, warp_offsets[(b * BIN_WARPS + w) * SUPERTILES + s] (those before warp w).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_count(const float4* __restrict__ circles, int n, int width, int height, int super_px,
          int* __restrict__ counts, int* __restrict__ warp_offsets, int chunks) {
    __shared__ int per_warp[BIN_WARPS][SUPERTILES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = blockIdx.x * BIN_CHUNK + warp * 32 * BIN_ITEMS;
    int held[LANE_SLOTS] = {};
    for_each_circle_group(circles, n, first, width, height, super_px, [&](int, SuperRange r) {
        for_each_supertile(r, [&](int s, unsigned hits) {
            if ((s & 31) == lane) held[s >> 5] += __popc(hits);
        });
    });
#pragma unroll
    for (int k = 0; k < LANE_SLOTS; ++k)
        if (k * 32 + lane < SUPERTILES) per_warp[warp][k * 32 + lane] = held[k];
    __syncthreads();
    for (int s = threadIdx.x; s < SUPERTILES; s += BIN_THREADS) {
        int sum = 0;
        for (int w = 0; w < BIN_WARPS; ++w) {
            warp_offsets[(blockIdx.x * BIN_WARPS + w) * SUPERTILES + s] = sum;
            sum += per_warp[w][s];
        }
        counts[s * chunks + blockIdx.x] = sum;
    }
}

// One block: counts[0, len) becomes its exclusive prefix sum and counts[len] the total, so
// supertile s's list is list[counts[s * chunks], counts[(s + 1) * chunks]).
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
bin_scan(int* __restrict__ counts, int len) {
    constexpr int ITEMS = 4;
    __shared__ int warp_sums[32];
    int carry = 0;
    for (int base = 0; base < len; base += SCAN_BLOCK * ITEMS) {
        const int first = base + threadIdx.x * ITEMS;
        int v[ITEMS], local = 0;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            v[k] = first + k < len ? counts[first + k] : 0;
            local += v[k];
        }
        int total;
        int run = carry + block_exclusive_scan<SCAN_BLOCK>(local, total, warp_sums);
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            if (first + k < len) counts[first + k] = run;
            run += v[k];
        }
        carry += total;
    }
    if (threadIdx.x == 0) counts[len] = carry;
}

// Same walk as bin_count; each circle index is written at its ordered place in every list it
// belongs to. Writes past capacity are dropped (render_fast then ignores the lists).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_emit(const float4* __restrict__ circles, int n, int width, int height, int super_px,
         const int* __restrict__ offsets, const int* __restrict__ warp_offsets, int chunks,
         int* __restrict__ list, int capacity) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = blockIdx.x * BIN_CHUNK + warp * 32 * BIN_ITEMS;
    const unsigned lower = (1u << lane) - 1u;
    int next[LANE_SLOTS];   // lane l: where this warp's next circle for supertile 32k + l goes
#pragma unroll
    for (int k = 0; k < LANE_SLOTS; ++k) {
        const int s = k * 32 + lane;
        next[k] = s < SUPERTILES ? offsets[s * chunks + blockIdx.x] +
                                   warp_offsets[(blockIdx.x * BIN_WARPS + warp) * SUPERTILES + s] : 0;
    }
    for_each_circle_group(circles, n, first, width, height, super_px, [&](int i, SuperRange r) {
        for_each_supertile(r, [&](int s, unsigned hits) {
            const int base = __shfl_sync(FULL, next[s >> 5], s & 31);
            if (hits >> lane & 1u) {
                const int pos = base + __popc(hits & lower);
                if (pos < capacity) list[pos] = i;
            }
            if ((s & 31) == lane) next[s >> 5] = base + __popc(hits);
        });
    });
}

// Which of this thread's CULL_ITEMS circles of the chunk below `top` touch the tile: circle
// entry k = top - 1 - (m * BLOCK_THREADS + threadIdx.x) for item m (coalesced loads; all
// items in flight at once). Hits are returned as bit fields of 16 bits, one per item.
struct Candidates { float4 c[CULL_ITEMS]; int index[CULL_ITEMS]; };

__device__ __forceinline__ unsigned long long cull_chunk(
        Candidates& cand, const float4* __restrict__ circles, const int* __restrict__ list,
        bool listed, int top, int begin, int width, int height, int tx0, int tx1, int ty0, int ty1) {
    unsigned long long hits = 0;
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        if (k >= begin) {
            cand.index[m] = listed ? list[k] : k;
            cand.c[m] = circles[cand.index[m]];
            const PixelBox b = circle_box(cand.c[m], width, height);
            if (b.x0 < tx1 && b.x1 > tx0 && b.y0 < ty1 && b.y1 > ty0) hits |= 1ull << (16 * m);
        }
    }
    return hits;
}

// One block per tile. With binned != 0 (and lists that fit their capacity) the tile walks its
// supertile's list, otherwise every circle. cleared != 0: the image behind the circles is the
// clear colour of each row (the clear fused into the render); otherwise the image as it is.
// Each step culls CULL_ITEMS * BLOCK_THREADS circles, compacts the hits in descending circle
// order into shared memory with one block scan, and composites them front to back.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
render_fast(const float4* __restrict__ circles, const float* __restrict__ colors, int n,
            const int* __restrict__ list, const int* __restrict__ offsets, int chunks, int capacity,
            int super_px, int binned, float4* __restrict__ image, const float4* __restrict__ rows,
            int cleared, int width, int height, int snow) {
    static_assert(CULL_ITEMS >= 1 && CULL_ITEMS <= 4 && BLOCK_THREADS * CULL_ITEMS < 65536,
                  "hit counts are 16-bit fields of one 64-bit scan");
    constexpr int STEP = BLOCK_THREADS * CULL_ITEMS;
    __shared__ float4 tile_circles[STEP];
    __shared__ float3 tile_colors[STEP];
    __shared__ unsigned long long warp_sums[32];
    const int tx0 = blockIdx.x * TILE_SIZE, ty0 = blockIdx.y * TILE_SIZE;
    const int tx1 = min(tx0 + TILE_SIZE, width), ty1 = min(ty0 + TILE_SIZE, height);
    const int x = tx0 + threadIdx.x % TILE_SIZE, y = ty0 + threadIdx.x / TILE_SIZE;
    const bool inside = x < width && y < height;
    const float px = pixel_centre(x, width), py = pixel_centre(y, height);

    int begin = 0, end = n;
    const bool listed = binned && offsets[SUPERTILES * chunks] <= capacity;
    if (listed) {
        const int s = (ty0 / super_px) * SUPER_GRID + tx0 / super_px;
        begin = offsets[s * chunks];
        end = offsets[(s + 1) * chunks];
    }
    float4 behind = make_float4(0.f, 0.f, 0.f, 0.f);
    if (inside) behind = cleared ? rows[y] : image[y * width + x];
    float T = inside ? 1.f : 0.f, alpha_sum = 0.f;
    float3 acc = make_float3(0.f, 0.f, 0.f);

    for (int top = end; top > begin; top -= STEP) {
        Candidates cand;
        const unsigned long long hits = cull_chunk(cand, circles, list, listed, top, begin, width,
                                                   height, tx0, tx1, ty0, ty1);
        unsigned long long totals;
        const unsigned long long before = block_exclusive_scan<BLOCK_THREADS>(hits, totals, warp_sums);
        int count = 0;       // item m of every thread comes before item m + 1 of any thread
#pragma unroll
        for (int m = 0; m < CULL_ITEMS; ++m) {
            if (hits >> (16 * m) & 1ull) {
                const int slot = count + (int)(before >> (16 * m) & 0xffffull);
                const int i = cand.index[m];
                tile_circles[slot] = cand.c[m];
                tile_colors[slot] = snow ? make_float3(0.f, 0.f, 0.f)
                                         : make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]);
            }
            count += (int)(totals >> (16 * m) & 0xffffull);
        }
        __syncthreads();
        for (int j = 0; j < count && T >= T_EPS; ++j) {
            const float4 cj = tile_circles[j];
            const float d2 = dist2(cj, px, py);
            if (d2 > cj.w * cj.w) continue;
            float a;
            float3 col;
            if (snow) {
                snow_shade(d2, cj, a, col);
            } else {
                a = .5f;
                col = tile_colors[j];
            }
            const float w = T * a;
            acc.x += w * col.x;
            acc.y += w * col.y;
            acc.z += w * col.z;
            T *= 1.f - a;
            alpha_sum += a;
        }
        if (__syncthreads_and(T < T_EPS)) break;     // also guards the shared lists' reuse
    }
    if (inside)
        image[y * width + x] = make_float4(acc.x + T * behind.x, acc.y + T * behind.y,
                                           acc.z + T * behind.z, behind.w + alpha_sum);
}
