// The fast renderer. Per frame:
//
// 1. tile_boxes: every circle's pixel box, in tiles, packed into one 32-bit word, next to its
//    index: an "entry". Culling then reads 8 bytes per circle and tests it in 3 instructions.
// 2. Binning (scenes with many circles): every entry is listed under each supertile (one of
//    SUPER_GRID x SUPER_GRID) its box touches, in circle order: count per (chunk of circles,
//    supertile), exclusive scan, emit. Each warp ranks its 32 circles with ballots, so the
//    lists come out ordered without a sort.
// 3. render_fast, one block per tile (TILE_SIZE x TILE_SIZE pixels, one thread per pixel):
//    walk the supertile's list (or every entry) from the LAST circle to the first, cull
//    CULL_ITEMS * BLOCK_THREADS entries per step, composite the hits front to back with
//    transmittance T, and stop once every pixel of the tile has T < T_EPS. "Over" is
//    associative, so this equals serial blending up to rounding and the at most
//    T_EPS * max colour that the circles behind a finished pixel would have added.
#include "shade.cuh"
#include "scan.cuh"

constexpr int SUPERTILES = SUPER_GRID * SUPER_GRID;
constexpr int BIN_WARPS = BIN_THREADS / 32;
constexpr int LANE_SLOTS = (SUPERTILES + 31) / 32;   // per-supertile counters each lane holds
constexpr unsigned FULL = 0xffffffffu;
constexpr unsigned NO_TILES = 0x000000ffu;           // x0 = 255 > x1 = 0: touches no tile

// ---- packed tile boxes: bytes (x0, x1, y0, y1), inclusive tile indices, so images of up to
// ---- 256 tiles a side. A circle whose pixel box is empty covers no pixel: NO_TILES.

__device__ __forceinline__ unsigned pack_tile_box(float4 c, int width, int height) {
    const PixelBox b = circle_box(c, width, height);
    if (b.x0 >= b.x1 || b.y0 >= b.y1) return NO_TILES;
    return (unsigned)(b.x0 / TILE_SIZE) | (unsigned)((b.x1 - 1) / TILE_SIZE) << 8 |
           (unsigned)(b.y0 / TILE_SIZE) << 16 | (unsigned)((b.y1 - 1) / TILE_SIZE) << 24;
}

// tile = (tx, tx, ty, ty) in bytes. Per byte: tx >= x0, x1 >= tx, ty >= y0, y1 >= ty.
__device__ __forceinline__ bool box_has_tile(unsigned box, unsigned tile) {
    return __vcmpgeu4(__byte_perm(tile, box, 0x7250), __byte_perm(tile, box, 0x3614)) == FULL;
}

extern "C" __global__ void tile_boxes(const float4* __restrict__ circles, int n, int width,
                                      int height, uint2* __restrict__ entries) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) entries[i] = make_uint2((unsigned)i, pack_tile_box(circles[i], width, height));
}

// ---- binning ----

// Inclusive supertile range of a packed tile box (x0 > x1 when it touches no tile).
struct SuperRange { int x0, x1, y0, y1; };

__device__ __forceinline__ SuperRange super_range(unsigned box, int tiles_per_super) {
    return {(int)(box & 0xffu) / tiles_per_super, (int)(box >> 8 & 0xffu) / tiles_per_super,
            (int)(box >> 16 & 0xffu) / tiles_per_super, (int)(box >> 24) / tiles_per_super};
}

// Walks a warp's `items` groups of 32 entries from `first`, loading the next group while the
// current one is binned; calls visit(entry, range, valid) with the lane's entry of each group.
template <class Visit>
__device__ __forceinline__ void for_each_entry_group(const uint2* __restrict__ entries, int n,
                                                     int first, int items, int tiles_per_super,
                                                     Visit visit) {
    const int lane = threadIdx.x & 31;
    uint2 next = first + lane < n ? entries[first + lane] : make_uint2(0u, NO_TILES);
    for (int it = 0; it < items && first + it * 32 < n; ++it) {
        const int i = first + it * 32 + lane;
        const uint2 e = next;
        if (it + 1 < items && i + 32 < n) next = entries[i + 32];
        visit(e, super_range(i < n ? e.y : NO_TILES, tiles_per_super));
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

// Block b handles entries [b * chunk, (b + 1) * chunk), chunk = BIN_THREADS * items, each warp
// 32 * items of them. Writes counts[s * chunks + b] (entries of the chunk touching s) and, for
// bin_emit, warp_offsets[(b * BIN_WARPS + w) * SUPERTILES + s] (those before warp w).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_count(const uint2* __restrict__ entries, int n, int tiles_per_super, int items,
          int* __restrict__ counts, int* __restrict__ warp_offsets, int chunks) {
    __shared__ int per_warp[BIN_WARPS][SUPERTILES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    int held[LANE_SLOTS] = {};
    for_each_entry_group(entries, n, first, items, tiles_per_super, [&](uint2, SuperRange r) {
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
    constexpr int ITEMS = 8;
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

// Same walk as bin_count; each entry is written at its ordered place in every list it belongs
// to. Writes past capacity are dropped (render_fast then walks every entry instead).
extern "C" __global__ void __launch_bounds__(BIN_THREADS)
bin_emit(const uint2* __restrict__ entries, int n, int tiles_per_super, int items,
         const int* __restrict__ offsets, const int* __restrict__ warp_offsets, int chunks,
         uint2* __restrict__ list, int capacity) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int first = (blockIdx.x * BIN_WARPS + warp) * 32 * items;
    const unsigned lower = (1u << lane) - 1u;
    int next[LANE_SLOTS];   // lane l: where this warp's next entry for supertile 32k + l goes
#pragma unroll
    for (int k = 0; k < LANE_SLOTS; ++k) {
        const int s = k * 32 + lane;
        next[k] = s < SUPERTILES ? offsets[s * chunks + blockIdx.x] +
                                   warp_offsets[(blockIdx.x * BIN_WARPS + warp) * SUPERTILES + s] : 0;
    }
    for_each_entry_group(entries, n, first, items, tiles_per_super, [&](uint2 e, SuperRange r) {
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
// flight at once). Returns which touch the tile as 16-bit fields, one per item, and loads the
// circles of the hits.
struct Candidates { float4 c[CULL_ITEMS]; unsigned index[CULL_ITEMS]; };

__device__ __forceinline__ unsigned long long cull_step(Candidates& cand,
                                                        const uint2* __restrict__ entries,
                                                        const float4* __restrict__ circles,
                                                        int top, int begin, unsigned tile) {
    unsigned long long hits = 0;
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        if (k >= begin) {
            const uint2 e = entries[k];
            if (box_has_tile(e.y, tile)) {
                hits |= 1ull << (16 * m);
                cand.index[m] = e.x;
                cand.c[m] = circles[e.x];
            }
        }
    }
    return hits;
}

// One block per tile. all_entries: every circle's entry (tile_boxes); with binned != 0 and
// lists within capacity the tile walks its supertile's list instead. cleared != 0: the image
// behind the circles is each row's clear colour (the clear fused into the render).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
render_fast(const uint2* __restrict__ all_entries, int n, const uint2* __restrict__ list,
            const int* __restrict__ offsets, int chunks, int capacity, int tiles_per_super,
            int binned, const float4* __restrict__ circles, const float* __restrict__ colors,
            float4* __restrict__ image, const float4* __restrict__ rows, int cleared, int width,
            int height, int snow) {
    static_assert(CULL_ITEMS >= 1 && CULL_ITEMS <= 4 && BLOCK_THREADS * CULL_ITEMS < 65536,
                  "hit counts are 16-bit fields of one 64-bit scan");
    constexpr int STEP = BLOCK_THREADS * CULL_ITEMS;
    __shared__ float4 tile_circles[STEP];
    __shared__ float3 tile_colors[STEP];
    __shared__ unsigned long long warp_sums[32];
    const int tx = blockIdx.x, ty = blockIdx.y;
    const unsigned tile = (unsigned)tx * 0x0101u | (unsigned)ty * 0x01010000u;
    const int x = tx * TILE_SIZE + threadIdx.x % TILE_SIZE, y = ty * TILE_SIZE + threadIdx.x / TILE_SIZE;
    const bool inside = x < width && y < height;
    const float px = pixel_centre(x, width), py = pixel_centre(y, height);

    const uint2* entries = all_entries;
    int begin = 0, end = n;
    if (binned && offsets[SUPERTILES * chunks] <= capacity) {
        const int s = (ty / tiles_per_super) * SUPER_GRID + tx / tiles_per_super;
        entries = list;
        begin = offsets[s * chunks];
        end = offsets[(s + 1) * chunks];
    }
    float4 behind = make_float4(0.f, 0.f, 0.f, 0.f);
    if (inside) behind = cleared ? rows[y] : image[y * width + x];
    float T = inside ? 1.f : 0.f, alpha_sum = 0.f;
    float3 acc = make_float3(0.f, 0.f, 0.f);

    for (int top = end; top > begin; top -= STEP) {
        Candidates cand;
        const unsigned long long hits = cull_step(cand, entries, circles, top, begin, tile);
        unsigned long long totals;
        const unsigned long long before = block_exclusive_scan<BLOCK_THREADS>(hits, totals, warp_sums);
        int count = 0;       // item m of every thread comes before item m + 1 of any thread
#pragma unroll
        for (int m = 0; m < CULL_ITEMS; ++m) {
            if (hits >> (16 * m) & 1ull) {
                const int slot = count + (int)(before >> (16 * m) & 0xffffull);
                const unsigned i = cand.index[m];
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
