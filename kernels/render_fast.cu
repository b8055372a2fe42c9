// The fast renderer. Per frame:
//
// 1. Binning (scenes with many circles): every circle is listed under each supertile (one of
//    SUPER_GRID x SUPER_GRID) its pixel box touches, in circle order, as an "entry": its index
//    and its box in tiles packed into 32 bits. bin_count counts per (chunk of circles,
//    supertile), bin_scan scans each supertile's row of counts, bin_emit writes. Each warp
//    ranks its 32 circles with ballots, so the lists come out ordered without a sort.
// 2. render_fast, one block per tile (FAST_TILE x FAST_TILE pixels, PIXELS per thread): walk
//    the supertile's list (or every circle) from the LAST circle to the first, cull
//    CULL_ITEMS * BLOCK_THREADS circles per step, composite the hits front to back with
//    transmittance T, and stop once every pixel of the tile has T < T_EPS. "Over" is
//    associative, so this equals serial blending up to rounding and the at most
//    T_EPS * max colour that the circles behind a finished pixel would have added.
#include "shade.cuh"
#include "scan.cuh"

constexpr int SUPERTILES = SUPER_GRID * SUPER_GRID;
constexpr int BIN_WARPS = BIN_THREADS / 32;
constexpr int LANE_SLOTS = (SUPERTILES + 31) / 32;   // per-supertile counters each lane holds
constexpr int PIXELS = FAST_TILE * FAST_TILE / BLOCK_THREADS;
constexpr int ROW_STEP = BLOCK_THREADS / FAST_TILE;  // a thread's pixels are this many rows apart
constexpr unsigned FULL = 0xffffffffu;
constexpr unsigned NO_TILES = 0x000000ffu;           // x0 = 255 > x1 = 0: touches no tile
static_assert(FAST_TILE * FAST_TILE % BLOCK_THREADS == 0 && BLOCK_THREADS % FAST_TILE == 0,
              "a tile is whole rows of threads");

// ---- packed tile boxes: bytes (x0, x1, y0, y1), inclusive tile indices, so images of up to
// ---- 256 tiles a side. A circle whose pixel box is empty covers no pixel: NO_TILES.

__device__ __forceinline__ unsigned pack_tile_box(float4 c, int width, int height) {
    const PixelBox b = circle_box(c, width, height);
    if (b.x0 >= b.x1 || b.y0 >= b.y1) return NO_TILES;
    return (unsigned)(b.x0 / FAST_TILE) | (unsigned)((b.x1 - 1) / FAST_TILE) << 8 |
           (unsigned)(b.y0 / FAST_TILE) << 16 | (unsigned)((b.y1 - 1) / FAST_TILE) << 24;
}

// tile = (tx, tx, ty, ty) in bytes. Per byte: tx >= x0, x1 >= tx, ty >= y0, y1 >= ty.
__device__ __forceinline__ bool box_has_tile(unsigned box, unsigned tile) {
    return __vcmpgeu4(__byte_perm(tile, box, 0x7250), __byte_perm(tile, box, 0x3614)) == FULL;
}

// ---- binning ----

// Inclusive supertile range of a packed tile box (x0 > x1 when it touches no tile).
struct SuperRange { int x0, x1, y0, y1; };

__device__ __forceinline__ SuperRange super_range(unsigned box, int tiles_per_super) {
    return {(int)(box & 0xffu) / tiles_per_super, (int)(box >> 8 & 0xffu) / tiles_per_super,
            (int)(box >> 16 & 0xffu) / tiles_per_super, (int)(box >> 24) / tiles_per_super};
}

// Walks a warp's `items` groups of 32 circles from `first`, loading the next group while the
// current one is binned; calls visit(entry, range) with the lane's circle of each group.
template <class Visit>
__device__ __forceinline__ void for_each_circle_group(const float4* __restrict__ circles, int n,
                                                      int first, int items, int width, int height,
                                                      int tiles_per_super, Visit visit) {
    const int lane = threadIdx.x & 31;
    float4 next = first + lane < n ? circles[first + lane] : make_float4(0.f, 0.f, 0.f, 0.f);
    for (int it = 0; it < items && first + it * 32 < n; ++it) {
        const int i = first + it * 32 + lane;
        const float4 c = next;
        if (it + 1 < items && i + 32 < n) next = circles[i + 32];
        const unsigned box = i < n ? pack_tile_box(c, width, height) : NO_TILES;
        visit(make_uint2((unsigned)i, box), super_range(box, tiles_per_super));
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

// Block b handles circles [b * chunk, (b + 1) * chunk), chunk = BIN_THREADS * items, each warp
// 32 * items of them. Writes counts[s * chunks + b] (circles of the chunk touching s) and, for
// bin_emit, warp_offsets[(b * BIN_WARPS + w) * SUPERTILES + s] (those before warp w).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super,
          int items, int* __restrict__ counts, int* __restrict__ warp_offsets, int chunks) {
    __shared__ int per_warp[BIN_WARPS][SUPERTILES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    int held[LANE_SLOTS] = {};
    for_each_circle_group(circles, n, first, items, width, height, tiles_per_super,
                          [&](uint2, SuperRange r) {
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

// Block s: row s of counts (one count per chunk) becomes its exclusive prefix sum and
// totals[s] the row's sum, the length of supertile s's list.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
bin_scan(int* __restrict__ counts, int chunks, int* __restrict__ totals) {
    __shared__ int warp_sums[32];
    int* row = counts + blockIdx.x * chunks;
    int carry = 0;
    for (int base = 0; base < chunks; base += SCAN_BLOCK) {
        const int i = base + threadIdx.x;
        const int v = i < chunks ? row[i] : 0;
        int total;
        const int before = block_exclusive_scan<SCAN_BLOCK>(v, total, warp_sums);
        if (i < chunks) row[i] = carry + before;
        carry += total;
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

// Where supertile s's list starts: the lengths of the lists before it (all lists, end to end).
__device__ __forceinline__ int list_start(const int* __restrict__ totals, int s) {
    int start = 0;
    for (int k = 0; k < s; ++k) start += totals[k];
    return start;
}

// Same walk as bin_count; each entry is written at its ordered place in every list it belongs
// to. Writes past capacity are dropped (render_fast then walks every circle instead).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_per_super,
         int items, const int* __restrict__ row_offsets, const int* __restrict__ totals,
         const int* __restrict__ warp_offsets, int chunks, uint2* __restrict__ list, int capacity) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    const unsigned lower = (1u << lane) - 1u;
    int next[LANE_SLOTS];   // lane l: where this warp's next entry for supertile 32k + l goes
#pragma unroll
    for (int k = 0; k < LANE_SLOTS; ++k) {
        const int s = k * 32 + lane;
        next[k] = s < SUPERTILES ? list_start(totals, s) + row_offsets[s * chunks + blockIdx.x] +
                                   warp_offsets[(blockIdx.x * BIN_WARPS + warp) * SUPERTILES + s] : 0;
    }
    for_each_circle_group(circles, n, first, items, width, height, tiles_per_super,
                          [&](uint2 e, SuperRange r) {
        for_each_supertile(r, [&](int s, unsigned hits) {
            const int base = __shfl_sync(FULL, next[s >> 5], s & 31);
            if (hits >> lane & 1u) {
                const int pos = base + __popc(hits & lower);
                if (pos < capacity) list[pos] = e;
            }
            if ((s & 31) == lane) next[s >> 5] = base + __popc(hits);
        });
    });
}

// ---- per-tile walk ----

// Entries k = top - 1 - (m * BLOCK_THREADS + threadIdx.x), m < CULL_ITEMS (coalesced, all in
// flight at once): from the supertile list, or circle k itself with its box computed here.
// Returns which touch the tile as 16-bit fields, one per item, with the hits' circles loaded.
struct Candidates { float4 c[CULL_ITEMS]; float3 col[CULL_ITEMS]; };

__device__ __forceinline__ unsigned long long cull_step(
        Candidates& cand, const uint2* __restrict__ list, bool listed,
        const float4* __restrict__ circles, const float* __restrict__ colors, bool snow,
        int top, int begin, unsigned tile, int width, int height) {
    unsigned long long hits = 0;
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        if (k < begin) continue;
        unsigned i;
        bool hit;
        if (listed) {
            const uint2 e = list[k];
            i = e.x;
            hit = box_has_tile(e.y, tile);
            if (hit) cand.c[m] = circles[i];
        } else {
            i = (unsigned)k;
            cand.c[m] = circles[i];
            hit = box_has_tile(pack_tile_box(cand.c[m], width, height), tile);
        }
        if (hit) {
            hits |= 1ull << (16 * m);
            cand.col[m] = snow ? make_float3(0.f, 0.f, 0.f)      // flat: alpha * colour
                               : make_float3(.5f * colors[3 * i], .5f * colors[3 * i + 1],
                                             .5f * colors[3 * i + 2]);
        }
    }
    return hits;
}

// One block per tile; thread t shades pixels (t % FAST_TILE, t / FAST_TILE + p * ROW_STEP).
// binned != 0 and lists within capacity: the tile walks its supertile's list, otherwise every
// circle. cleared != 0: the image behind the circles is each row's clear colour (the clear
// fused into the render); otherwise the image as it is. Blocks an SM: at least 4 with 32-pixel
// tiles (64 registers; unbounded they take 73), 6 with 16-pixel tiles (40); no spills.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_TILE >= 32 ? 4 : 6)
render_fast(const float4* __restrict__ circles, const float* __restrict__ colors, int n,
            const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,
            int tiles_per_super, int binned, float4* __restrict__ image,
            const float4* __restrict__ rows, int cleared, int width, int height, int snow) {
    static_assert(CULL_ITEMS >= 1 && CULL_ITEMS <= 4 && BLOCK_THREADS * CULL_ITEMS < 65536,
                  "hit counts are 16-bit fields of one 64-bit scan");
    constexpr int STEP = BLOCK_THREADS * CULL_ITEMS;
    __shared__ float4 tile_circles[STEP];
    __shared__ float3 tile_colors[STEP];
    __shared__ unsigned long long warp_sums[32];
    const int tx = blockIdx.x, ty = blockIdx.y;
    const unsigned tile = (unsigned)tx * 0x0101u | (unsigned)ty * 0x01010000u;
    const int x = tx * FAST_TILE + threadIdx.x % FAST_TILE;
    const int y0 = ty * FAST_TILE + threadIdx.x / FAST_TILE;
    const float px = pixel_centre(x, width);
    float py[PIXELS], T[PIXELS], alpha_sum[PIXELS];
    float3 acc[PIXELS];
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + p * ROW_STEP;
        py[p] = pixel_centre(y, height);
        T[p] = x < width && y < height ? 1.f : 0.f;
        alpha_sum[p] = 0.f;
        acc[p] = make_float3(0.f, 0.f, 0.f);
    }

    int begin = 0, end = n;
    bool listed = false;
    if (binned) {          // one pass over the list lengths: this list's start and the total
        const int s = (ty / tiles_per_super) * SUPER_GRID + tx / tiles_per_super;
        int start = 0, total = 0;
        for (int k = 0; k < SUPERTILES; ++k) {
            start += k < s ? totals[k] : 0;
            total += totals[k];
        }
        if (total <= capacity) {
            begin = start;
            end = start + totals[s];
            listed = true;
        }
    }

    for (int top = end; top > begin; top -= STEP) {
        Candidates cand;
        const unsigned long long hits = cull_step(cand, list, listed, circles, colors, snow, top,
                                                  begin, tile, width, height);
        unsigned long long totals_here;
        const unsigned long long before = block_exclusive_scan<BLOCK_THREADS>(hits, totals_here, warp_sums);
        int count = 0;       // item m of every thread comes before item m + 1 of any thread
#pragma unroll
        for (int m = 0; m < CULL_ITEMS; ++m) {
            if (hits >> (16 * m) & 1ull) {
                const int slot = count + (int)(before >> (16 * m) & 0xffffull);
                tile_circles[slot] = cand.c[m];
                tile_colors[slot] = cand.col[m];
            }
            count += (int)(totals_here >> (16 * m) & 0xffffull);
        }
        __syncthreads();
        bool open = false;
#pragma unroll
        for (int p = 0; p < PIXELS; ++p) open |= T[p] >= T_EPS;
        for (int j = 0; j < count && open; ++j) {
            const float4 cj = tile_circles[j];
            const float r2 = cj.w * cj.w;
            const float dx = cj.x - px;
            const float dxx = __fmul_rn(dx, dx);       // a thread's pixels share their column
            open = false;
#pragma unroll
            for (int p = 0; p < PIXELS; ++p) {
                if (T[p] < T_EPS) continue;
                const float dy = cj.y - py[p];
                const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
                if (d2 <= r2) {
                    if (snow) {
                        float a;
                        float3 col;
                        snow_shade(d2, cj, a, col);
                        const float w = T[p] * a;
                        acc[p].x += w * col.x;
                        acc[p].y += w * col.y;
                        acc[p].z += w * col.z;
                        T[p] *= 1.f - a;
                        alpha_sum[p] += a;
                    } else {                     // alpha .5, colour stored premultiplied
                        const float3 col = tile_colors[j];
                        acc[p].x += T[p] * col.x;
                        acc[p].y += T[p] * col.y;
                        acc[p].z += T[p] * col.z;
                        T[p] *= .5f;
                        alpha_sum[p] += .5f;
                    }
                }
                open |= T[p] >= T_EPS;
            }
        }
        if (__syncthreads_and(!open)) break;     // also guards the shared lists' reuse
    }
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + p * ROW_STEP;
        if (x < width && y < height) {
            const float4 behind = cleared ? rows[y] : image[y * width + x];
            image[y * width + x] = make_float4(acc[p].x + T[p] * behind.x, acc[p].y + T[p] * behind.y,
                                               acc[p].z + T[p] * behind.z, behind.w + alpha_sum[p]);
        }
    }
}
