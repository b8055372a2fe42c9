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
// 3. Sparse scenes (few circles over any pixel) bin per tile and draw per pixel instead: see
//    "the sparse path" below.
#include "shade.cuh"
#include "scan.cuh"

constexpr int SUPERTILES = SUPER_GRID * SUPER_GRID;
constexpr int BIN_WARPS = BIN_THREADS / 32;
constexpr int LANE_SLOTS = (SUPERTILES + 31) / 32;   // per-supertile counters each lane holds
constexpr int PIXELS = FAST_TILE * FAST_TILE / BLOCK_THREADS;
// Each warp shades a SUB_W x SUB_H sub-tile: lane l takes column l % SUB_W and rows
// l / SUB_W + 2p (p < PIXELS), so a thread's pixels share their column and a warp's are compact.
constexpr int SUB_W = 16, SUB_H = 2 * PIXELS;
static_assert(FAST_TILE % SUB_W == 0 && FAST_TILE % SUB_H == 0, "tiles split into sub-tiles");
constexpr unsigned FULL = 0xffffffffu;
constexpr unsigned NO_TILES = 0x000000ffu;           // x0 = 255 > x1 = 0: touches no tile
static_assert(FAST_TILE * FAST_TILE % BLOCK_THREADS == 0, "a tile is whole pixels per thread");

#ifdef PROFILE_BLOCKS
// Diagnostics only (benchmarks/block_profile.py compiles with -DPROFILE_BLOCKS=<blocks>): per
// block its start and end on the global timer (ns), SM, cull steps and hits blended.
__device__ unsigned long long block_profile[PROFILE_BLOCKS][4];
__shared__ int profile_steps, profile_hits;   // kept by thread 0 of the walk
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void profile_block(unsigned long long start) {
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        unsigned long long* rec = block_profile[blockIdx.y * gridDim.x + blockIdx.x];
        rec[0] = start;
        rec[1] = global_ns();
        rec[2] = (unsigned long long)smid << 32 | (unsigned)profile_steps;
        rec[3] = (unsigned)profile_hits;
    }
}
#define PROFILE_START                                                                          \
    const unsigned long long profile_start = global_ns();                                     \
    if (threadIdx.x == 0) profile_steps = profile_hits = 0;
#define PROFILE_STEP(hits) if (threadIdx.x == 0) { ++profile_steps; profile_hits += (hits); }
#define PROFILE_END profile_block(profile_start);
#else
#define PROFILE_START
#define PROFILE_STEP(hits)
#define PROFILE_END
#endif

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
    const int carry = block_exclusive_scan_n<SCAN_BLOCK>(
        chunks, [&](int i) { return row[i]; }, [&](int i, int before) { row[i] = before; }, warp_sums);
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

// Which tile block b draws. TILE_ORDER 1 starts the image's border ring first: coverage thins
// out at the border, so that is where walks are longest (benchmarks/block_profile.py), and a
// long walk that starts in the last wave sets the kernel's time.
__device__ __forceinline__ int2 tile_of_block() {
    const int gx = gridDim.x, gy = gridDim.y;
    int b = blockIdx.y * gx + blockIdx.x;
    if (TILE_ORDER == 0 || gx <= 2 || gy <= 2) return make_int2(b % gx, b / gx);
    if (b < gx) return make_int2(b, 0);
    if ((b -= gx) < gx) return make_int2(b, gy - 1);
    if ((b -= gx) < gy - 2) return make_int2(0, 1 + b);
    if ((b -= gy - 2) < gy - 2) return make_int2(gx - 1, 1 + b);
    b -= gy - 2;
    return make_int2(1 + b % (gx - 2), 1 + b / (gx - 2));
}

// Does a circle reach the rectangle [x0, x1] x [y0, y1] of pixel centres? The distance from
// its centre to the rectangle against its radius, with a margin for rounding: never false for
// a circle that covers one of those pixels (tighter than its box; a few extra are harmless).
__device__ __forceinline__ bool reaches(float4 c, float x0, float x1, float y0, float y1) {
    const float dx = fmaxf(fmaxf(x0 - c.x, c.x - x1), 0.f);
    const float dy = fmaxf(fmaxf(y0 - c.y, c.y - y1), 0.f);
    return dx * dx + dy * dy <= c.w * c.w * 1.0001f;
}

// A step's entries are k = top - 1 - (m * BLOCK_THREADS + threadIdx.x), m < CULL_ITEMS
// (coalesced). fetch_step loads what the cull needs first: the list entry (index, packed box),
// kept as bits in x and y, or the circle itself.
struct Fetched { float4 v[CULL_ITEMS]; };

__device__ __forceinline__ Fetched fetch_step(const uint2* __restrict__ list, bool listed,
                                              const float4* __restrict__ circles, int top, int begin) {
    Fetched f;
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        if (k < begin) continue;
        if (listed) {
            const uint2 e = list[k];
            f.v[m] = make_float4(__uint_as_float(e.x), __uint_as_float(e.y), 0.f, 0.f);
        } else {
            f.v[m] = circles[k];
        }
    }
    return f;
}

// Which of the fetched entries reach the tile, as 16-bit fields, one per item; the hits'
// circles (and, flat shading, colours times alpha .5) are left in cand.
struct Candidates { float4 c[CULL_ITEMS]; float3 col[CULL_ITEMS]; };

template <bool SNOW>
__device__ __forceinline__ unsigned long long cull_step(
        Candidates& cand, const Fetched& f, bool listed, const float4* __restrict__ circles,
        const float* __restrict__ colors, int top, int begin, unsigned tile, float4 rect) {
    unsigned long long hits = 0;
#pragma unroll
    for (int m = 0; m < CULL_ITEMS; ++m) {
        const int k = top - 1 - (m * BLOCK_THREADS + (int)threadIdx.x);
        if (k < begin) continue;
        unsigned i;
        bool hit;
        if (listed) {
            i = __float_as_uint(f.v[m].x);
            hit = box_has_tile(__float_as_uint(f.v[m].y), tile);
            if (hit) cand.c[m] = circles[i];
        } else {
            i = (unsigned)k;
            cand.c[m] = f.v[m];
            hit = reaches(f.v[m], rect.x, rect.y, rect.z, rect.w);
        }
        if (hit) {
            hits |= 1ull << (16 * m);
            if (!SNOW)
                cand.col[m] = make_float3(.5f * colors[3 * i], .5f * colors[3 * i + 1],
                                          .5f * colors[3 * i + 2]);
        }
    }
    return hits;
}

// One tile (pixels per thread: see SUB_W): walk entries [begin, end) of `list` (listed) or
// circles [begin, end) from the last to the first, cull CULL_ITEMS * BLOCK_THREADS per step,
// composite the hits front to back, stop once every pixel has T < T_EPS. cleared != 0: the
// image behind is each row's clear colour, else the image.
template <bool SNOW>
__device__ __forceinline__ void walk_tile(
        int2 t, const float4* __restrict__ circles, const float* __restrict__ colors,
        const uint2* __restrict__ list, bool listed, int begin, int end,
        float4* __restrict__ image, const float4* __restrict__ rows, int cleared,
        int width, int height) {
    static_assert(CULL_ITEMS >= 1 && CULL_ITEMS <= 4 && BLOCK_THREADS * CULL_ITEMS < 65536,
                  "hit counts are 16-bit fields of one 64-bit scan");
    constexpr int STEP = BLOCK_THREADS * CULL_ITEMS;
    // snow: the circles as they are; flat: (x, y, r^2, r) and alpha times colour
    __shared__ float4 tile_circles[STEP];
    __shared__ float4 tile_colors[SNOW ? 1 : STEP];
    __shared__ unsigned long long warp_sums[32];
    const unsigned tile = (unsigned)t.x * 0x0101u | (unsigned)t.y * 0x01010000u;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int sub_x = t.x * FAST_TILE + warp % (FAST_TILE / SUB_W) * SUB_W;
    const int sub_y = t.y * FAST_TILE + warp / (FAST_TILE / SUB_W) * SUB_H;
    const int x = sub_x + lane % SUB_W, y0 = sub_y + lane / SUB_W;
    const float px = pixel_centre(x, width);
    // the warp's pixel centres span [rect_x0, rect_x1] x [rect_y0, rect_y1]
    const float rect_x0 = pixel_centre(sub_x, width), rect_x1 = pixel_centre(sub_x + SUB_W - 1, width);
    const float rect_y0 = pixel_centre(sub_y, height), rect_y1 = pixel_centre(sub_y + SUB_H - 1, height);
    float py[PIXELS], T[PIXELS], alpha_sum[SNOW ? PIXELS : 1];
    float3 acc[PIXELS];
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + 2 * p;
        py[p] = pixel_centre(y, height);
        T[p] = x < width && y < height ? 1.f : 0.f;
        if (SNOW) alpha_sum[p] = 0.f;
        acc[p] = make_float3(0.f, 0.f, 0.f);
    }

    // the tile's pixel centres, for the cull of circles that are not listed
    const int last_x = min(t.x * FAST_TILE + FAST_TILE, width) - 1;
    const int last_y = min(t.y * FAST_TILE + FAST_TILE, height) - 1;
    const float4 tile_rect = make_float4(pixel_centre(t.x * FAST_TILE, width), pixel_centre(last_x, width),
                                         pixel_centre(t.y * FAST_TILE, height), pixel_centre(last_y, height));
    for (int top = end; top > begin; top -= STEP) {
        Candidates cand;
        const unsigned long long hits = cull_step<SNOW>(cand, fetch_step(list, listed, circles, top, begin),
                                                        listed, circles, colors, top, begin, tile, tile_rect);
        unsigned long long totals_here;
        const unsigned long long before = block_exclusive_scan<BLOCK_THREADS>(hits, totals_here, warp_sums);
        int count = 0;       // item m of every thread comes before item m + 1 of any thread
#pragma unroll
        for (int m = 0; m < CULL_ITEMS; ++m) {
            if (hits >> (16 * m) & 1ull) {
                const int slot = count + (int)(before >> (16 * m) & 0xffffull);
                const float4 c = cand.c[m];
                if (SNOW) {
                    tile_circles[slot] = c;
                } else {
                    tile_circles[slot] = make_float4(c.x, c.y, c.w * c.w, c.w);
                    tile_colors[slot] = make_float4(cand.col[m].x, cand.col[m].y, cand.col[m].z, 0.f);
                }
            }
            count += (int)(totals_here >> (16 * m) & 0xffffull);
        }
        PROFILE_STEP(count)
        __syncthreads();
        bool open = false;
#pragma unroll
        for (int p = 0; p < PIXELS; ++p) open |= T[p] >= T_EPS;
        if (SNOW) {
            for (int j = 0; j < count && open; ++j) {
                const float4 cj = tile_circles[j];
                const float dx = __fsub_rn(cj.x, px);
                const float dxx = __fmul_rn(dx, dx);       // a thread's pixels share their column
                open = false;
#pragma unroll
                for (int p = 0; p < PIXELS; ++p) {
                    if (T[p] < T_EPS) continue;
                    const float dy = __fsub_rn(cj.y, py[p]);
                    const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
                    if (d2 <= cj.w * cj.w) {
                        float a;
                        float3 col;
                        snow_shade(d2, cj, a, col);
                        const float w = T[p] * a;
                        acc[p].x += w * col.x;
                        acc[p].y += w * col.y;
                        acc[p].z += w * col.z;
                        T[p] *= 1.f - a;
                        alpha_sum[p] += a;
                    }
                    open |= T[p] >= T_EPS;
                }
            }
        } else {
            // Warp by warp: 32 hits at a time, one per lane, are tested against the warp's
            // sub-tile (distance from the circle's centre to the rectangle of its pixel
            // centres, with a margin for rounding), and the warp blends only those that reach
            // it. Branch-free per pixel, so the pixels are independent chains. Alpha is .5,
            // so T stays a power of two and T - .5 * w is exact.
            open = __any_sync(FULL, open);
            for (int j0 = 0; j0 < count && open; j0 += 32) {
                bool near = false;
                if (j0 + lane < count)
                    near = reaches(tile_circles[j0 + lane], rect_x0, rect_x1, rect_y0, rect_y1);
                for (unsigned mask = __ballot_sync(FULL, near); mask; mask &= mask - 1) {
                    const int j = j0 + __ffs(mask) - 1;
                    const float4 cj = tile_circles[j];
                    const float4 col = tile_colors[j];
                    const float dx = __fsub_rn(cj.x, px);
                    const float dxx = __fmul_rn(dx, dx);
#pragma unroll
                    for (int p = 0; p < PIXELS; ++p) {
                        const float dy = __fsub_rn(cj.y, py[p]);
                        const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
                        const float w = d2 <= cj.z && T[p] >= T_EPS ? T[p] : 0.f;
                        acc[p].x = fmaf(w, col.x, acc[p].x);
                        acc[p].y = fmaf(w, col.y, acc[p].y);
                        acc[p].z = fmaf(w, col.z, acc[p].z);
                        T[p] = fmaf(-.5f, w, T[p]);
                    }
                }
                bool mine = false;
#pragma unroll
                for (int p = 0; p < PIXELS; ++p) mine |= T[p] >= T_EPS;
                open = __any_sync(FULL, mine);
            }
        }
        if (__syncthreads_and(!open)) break;     // also guards the shared lists' reuse
    }
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + 2 * p;
        if (x < width && y < height) {
            // flat: T = 2^-k after k circles of alpha .5, so their alphas add up to k / 2
            const float alpha = SNOW ? alpha_sum[p] : -.5f * (float)ilogbf(T[p]);
            const float4 behind = cleared ? rows[y] : image[y * width + x];
            image[y * width + x] = make_float4(acc[p].x + T[p] * behind.x, acc[p].y + T[p] * behind.y,
                                               acc[p].z + T[p] * behind.z, behind.w + alpha);
        }
    }
}

// One block per tile. binned != 0 and lists within capacity: the tile walks its supertile's
// list, otherwise every circle. At least FAST_MIN_BLOCKS blocks an SM (4: 64 registers).
template <bool SNOW>
__device__ __forceinline__ void render_fast_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,
        int tiles_per_super, int binned, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height) {
    PROFILE_START
    const int2 t = tile_of_block();
    int begin = 0, end = n;
    bool listed = false;
    if (binned) {          // one pass over the list lengths: this list's start and the total
        const int s = (t.y / tiles_per_super) * SUPER_GRID + t.x / tiles_per_super;
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
    walk_tile<SNOW>(t, circles, colors, list, listed, begin, end, image, rows, cleared, width, height);
    PROFILE_END
}

#define RENDER_FAST_PARAMS                                                                     \
    const float4* __restrict__ circles, const float* __restrict__ colors, int n,              \
    const uint2* __restrict__ list, const int* __restrict__ totals, int capacity,             \
    int tiles_per_super, int binned, float4* __restrict__ image,                              \
    const float4* __restrict__ rows, int cleared, int width, int height
#define RENDER_FAST_ARGS circles, colors, n, list, totals, capacity, tiles_per_super, binned, \
    image, rows, cleared, width, height

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast(RENDER_FAST_PARAMS) { render_fast_body<false>(RENDER_FAST_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, FAST_MIN_BLOCKS)
render_fast_snow(RENDER_FAST_PARAMS) { render_fast_body<true>(RENDER_FAST_ARGS); }

// ---- the sparse path: scenes with few circles over any pixel (micro2M) ----
//
// Every pixel's circles fit a short list, so order is restored per pixel instead of per list:
// 1. tile_count: each circle adds 1 to the count of every tile its box touches (atomics).
// 2. tile_scan: counts -> where each tile's list starts, and a cursor for tile_emit; zeroes
//    the counts for the next frame.
// 3. tile_emit: each circle writes its index into every list it belongs to, in no order.
// 4. render_sparse, one block per tile, one pixel per thread: each thread takes list entries,
//    finds the tile's pixels the circle covers and appends the index to those pixels' lists in
//    shared memory; each pixel then sorts its list and blends it in circle order, exactly as
//    the serial reference does. A tile whose pixel lists overflow (or whose lists were cut
//    off at capacity) walks every circle instead, as render_fast does.

template <class Visit>
__device__ __forceinline__ void for_each_tile(unsigned box, int tiles_x, Visit visit) {
    const int x0 = box & 0xffu, x1 = box >> 8 & 0xffu, y0 = box >> 16 & 0xffu, y1 = box >> 24;
    for (int ty = y0; ty <= y1; ++ty)
        for (int tx = x0; tx <= x1; ++tx) visit(ty * tiles_x + tx);
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
tile_count(const float4* __restrict__ circles, int n, int width, int height, int tiles_x,
           int* __restrict__ counts) {
    for (int i = blockIdx.x * BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * BIN_THREADS)
        for_each_tile(pack_tile_box(circles[i], width, height), tiles_x,
                      [&](int t) { atomicAdd(&counts[t], 1); });
}

// One block. starts[t] = cursors[t] = counts before tile t; starts[tiles] = all of them.
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK)
tile_scan(int* __restrict__ counts, int tiles, int* __restrict__ starts, int* __restrict__ cursors) {
    __shared__ int warp_sums[32];
    const int carry = block_exclusive_scan_n<SCAN_BLOCK>(tiles, [&](int i) { return counts[i]; },
        [&](int i, int before) {
            starts[i] = cursors[i] = before;
            counts[i] = 0;
        }, warp_sums);
    if (threadIdx.x == 0) starts[tiles] = carry;
}

extern "C" __global__ void __launch_bounds__(BIN_THREADS)
tile_emit(const float4* __restrict__ circles, int n, int width, int height, int tiles_x,
          int* __restrict__ cursors, int* __restrict__ list, int capacity) {
    for (int i = blockIdx.x * BIN_THREADS + threadIdx.x; i < n; i += gridDim.x * BIN_THREADS)
        for_each_tile(pack_tile_box(circles[i], width, height), tiles_x, [&](int t) {
            const int pos = atomicAdd(&cursors[t], 1);
            if (pos < capacity) list[pos] = i;
        });
}

#if FAST_TILE * FAST_TILE == BLOCK_THREADS     // one pixel per thread
template <bool SNOW>
__device__ __forceinline__ void render_sparse_body(
        const float4* __restrict__ circles, const float* __restrict__ colors, int n,
        const int* __restrict__ list, const int* __restrict__ starts,
        const int* __restrict__ cursors, int capacity, float4* __restrict__ image,
        const float4* __restrict__ rows, int cleared, int width, int height) {
    PROFILE_START
    __shared__ int pixel_count[BLOCK_THREADS];
    __shared__ int pixel_list[SPARSE_SLOTS][BLOCK_THREADS];   // [slot][pixel]: no bank conflicts
    const int2 t = tile_of_block();
    const int tiles = gridDim.x * gridDim.y, tile = t.y * gridDim.x + t.x;
    const int x0 = t.x * FAST_TILE, y0 = t.y * FAST_TILE;
    pixel_count[threadIdx.x] = 0;
    __syncthreads();
    const bool cut = starts[tiles] > capacity;
    const int begin = starts[tile], end = cut ? begin : cursors[tile];
    for (int k = begin + (int)threadIdx.x; k < end; k += BLOCK_THREADS) {
        const int i = list[k];
        const float4 c = circles[i];
        const PixelBox b = circle_box(c, width, height);
        const float r2 = c.w * c.w;
        for (int y = max(b.y0, y0); y < min(b.y1, y0 + FAST_TILE); ++y) {
            const float py = pixel_centre(y, height);
            for (int x = max(b.x0, x0); x < min(b.x1, x0 + FAST_TILE); ++x) {
                if (dist2(c, pixel_centre(x, width), py) <= r2) {
                    const int p = (y - y0) * FAST_TILE + (x - x0);
                    const int slot = atomicAdd(&pixel_count[p], 1);
                    if (slot < SPARSE_SLOTS) pixel_list[slot][p] = i;
                }
            }
        }
    }
    __syncthreads();
    const int m = pixel_count[threadIdx.x];
    if (__syncthreads_or(cut || m > SPARSE_SLOTS)) {
        walk_tile<SNOW>(t, circles, colors, nullptr, false, 0, n, image, rows, cleared, width, height);
    } else {
        for (int a = 1; a < m; ++a) {            // insertion sort: circle order
            const int v = pixel_list[a][threadIdx.x];
            int j = a - 1;
            for (; j >= 0 && pixel_list[j][threadIdx.x] > v; --j)
                pixel_list[j + 1][threadIdx.x] = pixel_list[j][threadIdx.x];
            pixel_list[j + 1][threadIdx.x] = v;
        }
        const int x = x0 + threadIdx.x % FAST_TILE, y = y0 + threadIdx.x / FAST_TILE;
        if (x < width && y < height) {
            float4 p = cleared ? rows[y] : image[y * width + x];
            const float px = pixel_centre(x, width), py = pixel_centre(y, height);
            for (int j = 0; j < m; ++j) {
                const int i = pixel_list[j][threadIdx.x];
                shade_pixel(p, circles[i], colors, i, px, py, SNOW);
            }
            image[y * width + x] = p;
        }
    }
    PROFILE_END
}

#define RENDER_SPARSE_PARAMS                                                                   \
    const float4* __restrict__ circles, const float* __restrict__ colors, int n,              \
    const int* __restrict__ list, const int* __restrict__ starts,                             \
    const int* __restrict__ cursors, int capacity, float4* __restrict__ image,                \
    const float4* __restrict__ rows, int cleared, int width, int height
#define RENDER_SPARSE_ARGS circles, colors, n, list, starts, cursors, capacity, image, rows, \
    cleared, width, height

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, 4)
render_sparse(RENDER_SPARSE_PARAMS) { render_sparse_body<false>(RENDER_SPARSE_ARGS); }

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, 4)
render_sparse_snow(RENDER_SPARSE_PARAMS) { render_sparse_body<true>(RENDER_SPARSE_ARGS); }
#endif
