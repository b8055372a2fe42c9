// The tile walk, shared by walk.cu (the walk path) and draw.cu (the binned path's draws): one
// block composites one tile (FAST_TILE x FAST_TILE pixels, PIXELS per thread) from a list of
// entries or from every circle, from the LAST circle to the first: it culls
// CULL_ITEMS * BLOCK_THREADS circles per step (hits staged in shared memory: cull_step),
// composites the hits front to back with transmittance T, each warp its own sub-tile (runs of
// hits that cover it all folded first: fold_runs), and stops once every pixel of the tile has
// T < T_EPS. "Over" is associative, so this equals serial blending up to rounding and the at
// most T_EPS * max colour that the circles behind a finished pixel would have added.
#pragma once
#include "shade.cuh"
#include "cull.cuh"

constexpr int PIXELS = FAST_TILE * FAST_TILE / BLOCK_THREADS;
// Each warp shades a SUB_W x SUB_H sub-tile: lane l takes column l % SUB_W and rows
// l / SUB_W + 2p (p < PIXELS), so a thread's pixels share their column and a warp's are compact.
constexpr int SUB_W = 16, SUB_H = 2 * PIXELS;
static_assert(FAST_TILE % SUB_W == 0 && FAST_TILE % SUB_H == 0, "tiles split into sub-tiles");
static_assert(FAST_TILE * FAST_TILE % BLOCK_THREADS == 0, "a tile is whole pixels per thread");
// The flat walk keeps T an exact power of two (folded runs, flat_alpha): alpha must be 1/2.
static_assert(FLAT_ALPHA + FLAT_ALPHA == 1.f, "the flat walk relies on FLAT_ALPHA being 1/2");

// Snow shading (shade.cuh's snow_shade) from a staged circle: its largest alpha and 1 / r
// computed once a step, the square root and the exponential by the fast hardware paths, the
// ramp's two entries read from the block's copy in shared memory (`ramp`, its last entry twice:
// no clamp; picked by compare-and-select they cost a quarter of the loop). The draw allows
// rounding (it fuses multiply-adds); these differ from the reference's by a few ulp, far inside
// the course's tolerance (and the tests' 1e-3).
__device__ __forceinline__ void snow_shade_staged(float d2, float4 extra, const float4* ramp, float& alpha,
                                                  float3& col) {
    const float d = (d2 > 0.f ? d2 * rsqrtf(d2) : 0.f) * extra.y;
    const float scaled = d * (float)SNOW_RAMP_LAST;
    const int base = min((int)scaled, SNOW_RAMP_LAST);
    const float w = scaled - (float)base;
    const float4 lo = ramp[base], hi = ramp[base + 1];
    col = make_float3(fmaf(w, hi.x - lo.x, lo.x), fmaf(w, hi.y - lo.y, lo.y), fmaf(w, hi.z - lo.z, lo.z));
    alpha = extra.x * __expf((-1.f * SNOW_FALLOFF * d) * d);
}

// Does a circle cover every pixel centre of [x0, x1] x [y0, y1] by the reference's test?
// The rounded distance grows with |dx| and |dy| (each rounding is monotonic), so a pixel's is
// at most the farthest corner's: testing the four corners is exact, not an estimate.
__device__ __forceinline__ bool covers_rect(float4 c, float x0, float x1, float y0, float y1) {
    const float dx0 = __fsub_rn(c.x, x0), dx1 = __fsub_rn(c.x, x1);
    const float dy0 = __fsub_rn(c.y, y0), dy1 = __fsub_rn(c.y, y1);
    const float dxx = fmaxf(__fmul_rn(dx0, dx0), __fmul_rn(dx1, dx1));
    const float dyy = fmaxf(__fmul_rn(dy0, dy0), __fmul_rn(dy1, dy1));
    return __fadd_rn(dxx, dyy) <= c.z;           // c.z: r^2 as the pixel test rounds it
}

// Runs of hits that cover a warp's whole sub-tile, folded across the warp's 32 hits: lane l
// holds the run of full hits since the last partial hit before it (its colours composited
// over transmittance 1, alpha .5 each) and T, what that run lets through (a power of two).
struct Run { float3 color; float T; };

__device__ __forceinline__ Run fold_runs(unsigned full_mask, unsigned partial_mask, bool full,
                                         float4 col) {
    const int lane = threadIdx.x & 31;
    const unsigned before = (1u << lane) - 1u;
    const unsigned partial_before = partial_mask & before;
    const int start = partial_before ? 32 - __clz(partial_before) : 0;   // this lane's run starts
    const int rank = __popc(full_mask & before & ~((1u << start) - 1u));   // full hits before it
    const float weight = full ? __int_as_float((127 - rank) << 23) : 0.f;   // 2^-rank
    Run r{make_float3(weight * col.x, weight * col.y, weight * col.z),
          __int_as_float((127 - rank - (full ? 1 : 0)) << 23)};
    if (!full_mask) return r;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {     // scan within runs
        const float x = __shfl_up_sync(FULL, r.color.x, d);
        const float y = __shfl_up_sync(FULL, r.color.y, d);
        const float z = __shfl_up_sync(FULL, r.color.z, d);
        if (lane - d >= start) {
            r.color.x += x;
            r.color.y += y;
            r.color.z += z;
        }
    }
    return r;
}

// Blends a run (colour, T; T = 1: an empty run) into every pixel. T times a power of two is
// exact.
__device__ __forceinline__ void blend_run(float3 (&acc)[PIXELS], float (&T)[PIXELS], float4 run) {
    if (run.w == 1.f) return;
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        acc[p].x = fmaf(T[p], run.x, acc[p].x);
        acc[p].y = fmaf(T[p], run.y, acc[p].y);
        acc[p].z = fmaf(T[p], run.z, acc[p].z);
        T[p] *= run.w;
    }
}

// Flat alpha from T: T = 2^-k after k circles of alpha .5 (every update is exact), so the
// alphas add up to k / 2, and k is T's exponent. Past 126 circles T is flushed to 0, whose bits
// read k = 127: alpha 63.5.
__device__ __forceinline__ float flat_alpha(float T) {
    return FLAT_ALPHA * (float)(127 - (__float_as_int(T) >> 23));
}

__device__ __forceinline__ bool any_open(const float (&T)[PIXELS]) {
    bool open = false;
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) open |= T[p] >= T_EPS;
    return open;
}

// The step functions below take a thread's pixels as separate arrays (px, py, acc, T, alpha_sum):
// gathered into one struct they compiled to a slower walk (rand1M, rand10k 1.05x). The write-out
// stays in walk_tile: as a function it compiled to more instructions at 3-4 items a step.

// Snow, one step's staged hits, warp by warp, 32 at a time in order as the flat walk: the hits
// that reach the warp's sub-tile, one after the other, each thread shading its pixels that the
// circle covers and that are not yet finished (each pixel stops at T_EPS). Returns whether a
// pixel of the warp is still open.
__device__ __forceinline__ bool blend_step_snow(Stage<true>& stage, float px, const float (&py)[PIXELS],
                                                float3 (&acc)[PIXELS], float (&T)[PIXELS], float (&alpha_sum)[PIXELS],
                                                bool open) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const StagedHits staged = staged_hits(stage.hits);
    const int count = __shfl_sync(FULL, staged.incl, 31);
    open = __any_sync(FULL, open);
    for (int j0 = 0; j0 < count && open; j0 += 32) {
        const int at = hit_place(staged, min(j0 + lane, count - 1));
        const float4 rect = stage.rect[warp][0];
        const bool near = j0 + lane < count && reaches(stage.circle[at], rect.x, rect.y, rect.z, rect.w);
        for (unsigned mask = __ballot_sync(FULL, near); mask; mask &= mask - 1) {
            const int place = __shfl_sync(FULL, at, __ffs(mask) - 1);
            const float4 cj = stage.circle[place];
            const float dx = __fsub_rn(cj.x, px);
            const float dxx = __fmul_rn(dx, dx);       // a thread's pixels share their column
#pragma unroll
            for (int p = 0; p < PIXELS; ++p) {
                const float dy = __fsub_rn(cj.y, py[p]);
                const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
                if (T[p] >= T_EPS && d2 <= cj.z) {
                    float a;
                    float3 col;
                    snow_shade_staged(d2, stage.color[place], stage.ramp, a, col);
                    const float w = T[p] * a;
                    acc[p].x = fmaf(w, col.x, acc[p].x);
                    acc[p].y = fmaf(w, col.y, acc[p].y);
                    acc[p].z = fmaf(w, col.z, acc[p].z);
                    T[p] = fmaf(-a, T[p], T[p]);
                    alpha_sum[p] += a;
                }
            }
        }
        open = __any_sync(FULL, any_open(T));
    }
    return open;
}

// Flat: the warp's partial hits of this round, in order (partials of them in `partial`), each
// blended into the pixels it covers, the run of full hits before each blended first. Partial
// hits are blended branch-free (predicated), so the pixels are independent chains; alpha is .5,
// so T stays a power of two and every T update is exact.
__device__ __forceinline__ void blend_partial_hits(const float4 (&partial)[3][32], int partials, bool runs, float px,
                                                   const float (&py)[PIXELS], float3 (&acc)[PIXELS],
                                                   float (&T)[PIXELS]) {
    for (int k = 0; k < partials; ++k) {
        if (runs) blend_run(acc, T, partial[PARTIAL_RUN][k]);    // the run just before it
        const float4 cj = partial[PARTIAL_CIRCLE][k];
        const float4 cb = partial[PARTIAL_COLOR][k];
        const float dx = __fsub_rn(cj.x, px);
        const float dxx = __fmul_rn(dx, dx);
#pragma unroll
        for (int p = 0; p < PIXELS; ++p) {
            const float dy = __fsub_rn(cj.y, py[p]);
            const float d2 = __fadd_rn(dxx, __fmul_rn(dy, dy));   // = dist2(cj, px, py[p])
            if (d2 <= cj.z) {                   // predicated, not a branch
                acc[p].x = fmaf(T[p], cb.x, acc[p].x);
                acc[p].y = fmaf(T[p], cb.y, acc[p].y);
                acc[p].z = fmaf(T[p], cb.z, acc[p].z);
                T[p] = fmaf(-FLAT_ALPHA, T[p], T[p]);
            }
        }
        if ((k + 1) % BLEND_CHECK == 0 && !__any_sync(FULL, any_open(T))) return;
    }
}

// Flat, one step's staged hits, warp by warp, 32 at a time, one per lane, in order: each lane
// tests its hit against the warp's sub-tile: does the circle reach it (distance from its centre
// to the rectangle of pixel centres, with a margin for rounding), and does it cover all of it
// (covers_rect, exact). With several pixels a thread, the hits that cover it all need no
// per-pixel test: each run of them between two partial hits is folded across the lanes into one
// colour and one transmittance (fold_runs), and the warp's loop visits only the partial hits,
// blending the run before each into every pixel at once (4 operations a pixel). Each partial
// hit's lane first writes it, its colour and its run at its rank in the warp's `partial` arrays,
// so the loop reads them in order by a counter. Returns whether a pixel of the warp is open.
__device__ __forceinline__ bool blend_step_flat(Stage<false>& stage, float px, const float (&py)[PIXELS],
                                                float3 (&acc)[PIXELS], float (&T)[PIXELS], bool open) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const StagedHits staged = staged_hits(stage.hits);
    const int count = __shfl_sync(FULL, staged.incl, 31);
    float4 (&partial)[3][32] = stage.partial[warp];
    open = __any_sync(FULL, open);
    for (int j0 = 0; j0 < count && open; j0 += 32) {
        const int at = hit_place(staged, min(j0 + lane, count - 1));
        bool near = false, full = false;
        if (j0 + lane < count) {
            const float4 c = stage.circle[at];
            const float4 rect = stage.rect[warp][0];
            near = reaches(c, rect.x, rect.y, rect.z, rect.w);
            full = PIXELS > 1 && near && covers_rect(c, rect.x, rect.y, rect.z, rect.w);
        }
        const unsigned full_mask = __ballot_sync(FULL, full);
        const unsigned partial_mask = __ballot_sync(FULL, near) & ~full_mask;
        // this lane's partial hit at its rank; lane 31, unless partial, also leaves the run after
        // the last partial hit, at rank `partials`
        const int rank = __popc(partial_mask & ((1u << lane) - 1u));
        __syncwarp();                           // the last round's reads are done
        if (near && !full) {
            partial[PARTIAL_CIRCLE][rank] = stage.circle[at];
            partial[PARTIAL_COLOR][rank] = stage.color[at];
        }
        const Run run = fold_runs(full_mask, partial_mask, full,
                                  full ? stage.color[at] : make_float4(0.f, 0.f, 0.f, 0.f));
        if ((near && !full) || lane == 31)
            partial[PARTIAL_RUN][rank] = make_float4(run.color.x, run.color.y, run.color.z, run.T);
        __syncwarp();
        const int partials = __popc(partial_mask);
        blend_partial_hits(partial, partials, full_mask != 0u, px, py, acc, T);
        if (!(partial_mask >> 31)) blend_run(acc, T, partial[PARTIAL_RUN][partials]);   // the last run
        open = __any_sync(FULL, any_open(T));
    }
    return open;
}

// One tile t (pixels per thread: see SUB_W): walk entries [begin, end) of `list` (listed) or
// circles [begin, end) from the last to the first, STEP a step, composite each step's hits
// front to back, stop once every pixel has T < T_EPS. cleared != 0: the image behind is each
// row's clear colour, else the image. defer: a tile with a pixel still open after the last
// circle writes nothing and returns true (the circles given are only the front layer).
template <bool SNOW, bool LISTED>
__device__ __forceinline__ bool walk_tile(
        int2 t, const float4* __restrict__ circles, const float* __restrict__ colors,
        const uint2* __restrict__ list, int begin, int end,
        float4* __restrict__ image, const float4* __restrict__ rows, int cleared,
        int width, int height, bool defer) {
    Stage<SNOW>& stage = stage_memory<SNOW>();
    const unsigned tile = tile_key(t.x & 255, t.y & 255);     // see pack_in_cell
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int sub_x = t.x * FAST_TILE + warp % (FAST_TILE / SUB_W) * SUB_W;
    const int sub_y = t.y * FAST_TILE + warp / (FAST_TILE / SUB_W) * SUB_H;
    const int x = sub_x + lane % SUB_W, y0 = sub_y + lane / SUB_W;
    const float px = pixel_centre(x, width);
    float py[PIXELS], T[PIXELS], alpha_sum[SNOW ? PIXELS : 1];
    float3 acc[PIXELS];
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + 2 * p;
        py[p] = pixel_centre(y, height);
        // 1 in the image, else 0, by min/max: as a comparison the write-out reuses it, holding four
        // predicates through the walk, and the partial-hit loop tests its pixels one at a time
        T[p] = (float)max(0, min(1, min(width - x, height - y)));
        if (SNOW) alpha_sum[p] = 0.f;
        acc[p] = make_float3(0.f, 0.f, 0.f);
    }

    // the warp's pixel centres, and the tile's (for the cull of circles that are not listed)
    const int last_x = min(t.x * FAST_TILE + FAST_TILE, width) - 1;
    const int last_y = min(t.y * FAST_TILE + FAST_TILE, height) - 1;
    if (lane == 0) {
        stage.rect[warp][0] = make_float4(pixel_centre(sub_x, width), pixel_centre(sub_x + SUB_W - 1, width),
                                          pixel_centre(sub_y, height), pixel_centre(sub_y + SUB_H - 1, height));
        stage.rect[warp][1] = make_float4(pixel_centre(t.x * FAST_TILE, width), pixel_centre(last_x, width),
                                          pixel_centre(t.y * FAST_TILE, height), pixel_centre(last_y, height));
    }
    if (SNOW && threadIdx.x < SNOW_RAMP_LAST + 2) {      // read after the first step's barrier
        const float3 c = snow_ramp(min((int)threadIdx.x, SNOW_RAMP_LAST));
        stage.ramp[threadIdx.x] = make_float4(c.x, c.y, c.z, 0.f);
    }
    __syncwarp();
    for (int top = end; top > begin; top -= STEP) {
        cull_step<SNOW, LISTED>(stage, list, circles, colors, top, begin, tile, stage.rect[warp][1]);
        __syncthreads();
        bool open;
        if constexpr (SNOW) open = blend_step_snow(stage, px, py, acc, T, alpha_sum, any_open(T));
        else open = blend_step_flat(stage, px, py, acc, T, any_open(T));
        if (__syncthreads_and(!open)) break;     // also guards the stage's reuse
    }
    if (defer && __syncthreads_or(any_open(T))) return true;
    // Write-out: each pixel's colour over what is behind it (each row's clear colour, or the
    // image). Flat: every load before the first store (the stores may alias the loads, so
    // they would not be reordered, and each pixel would wait for its own load); snow holds more
    // values at this point, and loads as it stores. The pixels are stored evict-first (__stcs): the
    // image passes through L2 once, and would otherwise push out the circles and lists that other
    // tiles still read. A tile wholly inside the image (block-uniform) needs no bounds: its pixels
    // are a thread's column, every other row.
    const auto behind_at = [&](int px_x, int px_y) { return cleared ? rows[px_y] : image[px_y * width + px_x]; };
    const auto composite = [&](int p, float4 b) {
        const float alpha = SNOW ? alpha_sum[p] : flat_alpha(T[p]);
        return make_float4(acc[p].x + T[p] * b.x, acc[p].y + T[p] * b.y, acc[p].z + T[p] * b.z, b.w + alpha);
    };
    float4 behind[PIXELS];
    if ((t.x + 1) * FAST_TILE <= width && (t.y + 1) * FAST_TILE <= height) {
        float4* out = image + y0 * width + x;
        const float4* src = cleared ? rows + y0 : out;
        const int src_step = cleared ? 2 : 2 * width;
        if (!SNOW) {
#pragma unroll
            for (int p = 0; p < PIXELS; ++p) behind[p] = src[p * src_step];
        }
#pragma unroll
        for (int p = 0; p < PIXELS; ++p) __stcs(out + p * 2 * width, composite(p, SNOW ? src[p * src_step] : behind[p]));
        return false;
    }
    if (!SNOW) {
#pragma unroll
        for (int p = 0; p < PIXELS; ++p) behind[p] = behind_at(min(x, width - 1), min(y0 + 2 * p, height - 1));
    }
#pragma unroll
    for (int p = 0; p < PIXELS; ++p) {
        const int y = y0 + 2 * p;
        if (x < width && y < height) __stcs(image + y * width + x, composite(p, SNOW ? behind_at(x, y) : behind[p]));
    }
    return false;
}
