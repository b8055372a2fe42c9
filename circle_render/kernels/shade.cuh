// Coverage, snow shading and blending: the CUDA twin of circle_render/cpu/shading.py.
// The tiled renderer is compiled with --fmad=false, so each line rounds exactly as the NumPy
// reference does. The coverage test is exact under any flags (the fast renderer allows FMA).
#pragma once

// A circle's pixel box [x0, x1) x [y0, y1), clamped to the image, as the course computes it.
struct PixelBox { int x0, x1, y0, y1; };

__device__ __forceinline__ PixelBox circle_box(float4 c, int width, int height) {
    PixelBox b;
    b.x0 = min(max((int)((c.x - c.w) * (float)width), 0), width);
    b.x1 = min(max((int)((c.x + c.w) * (float)width) + 1, 0), width);
    b.y0 = min(max((int)((c.y - c.w) * (float)height), 0), height);
    b.y1 = min(max((int)((c.y + c.w) * (float)height) + 1, 0), height);
    return b;
}

// Normalised centre of pixel i: (1/size) * (i + 0.5), rounded (never fused into a later
// subtraction: at sizes that are not powers of two, c.x - px fused would decide rim pixels
// differently from the reference).
__device__ __forceinline__ float pixel_centre(int i, int size) {
    return __fmul_rn(1.f / (float)size, (float)i + PIXEL_CENTRE);
}

// dx*dx + dy*dy rounded step by step (never fused): which pixels a circle covers must not
// depend on compiler flags, or rim pixels would differ from the reference by a whole circle.
__device__ __forceinline__ float dist2(float4 c, float px, float py) {
    const float dx = __fsub_rn(c.x, px), dy = __fsub_rn(c.y, py);
    return __fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dy, dy));
}

// Entry k of the snow ramp (SNOW_RAMP_R0 .. SNOW_RAMP_B4 from constants.py). Selects, not a
// table: a table indexed per thread would live in local memory.
#define SNOW_RAMP_PICK(C, k) ((k) == 0 ? SNOW_RAMP_##C##0 : (k) == 1 ? SNOW_RAMP_##C##1 : \
    (k) == 2 ? SNOW_RAMP_##C##2 : (k) == 3 ? SNOW_RAMP_##C##3 : SNOW_RAMP_##C##4)
static_assert(SNOW_RAMP_LAST == 4, "snow_ramp picks one of five entries");
__device__ __forceinline__ float3 snow_ramp(int k) {
    return make_float3(SNOW_RAMP_PICK(R, k), SNOW_RAMP_PICK(G, k), SNOW_RAMP_PICK(B, k));
}

__device__ __forceinline__ void snow_shade(float d2, float4 c, float& alpha, float3& col) {
    float d = sqrtf(d2) / c.w;
    float scaled = d * (float)SNOW_RAMP_LAST;
    int base = min((int)scaled, SNOW_RAMP_LAST);
    float w = scaled - (float)base;
    const float3 lo = snow_ramp(base), hi = snow_ramp(min(base + 1, SNOW_RAMP_LAST));
    col.x = (1.f - w) * lo.x + w * hi.x;
    col.y = (1.f - w) * lo.y + w * hi.y;
    col.z = (1.f - w) * lo.z + w * hi.z;
    float max_alpha = SNOW_ALPHA_BASE + SNOW_ALPHA_DEPTH * (1.f - c.z);
    max_alpha = SNOW_MAX_ALPHA * fminf(fmaxf(max_alpha, 0.f), 1.f);
    alpha = max_alpha * expf((-1.f * SNOW_FALLOFF * d) * d);
}

// rgb <- alpha*colour + (1-alpha)*rgb; a <- a + alpha.
__device__ __forceinline__ void blend(float4& p, float alpha, float3 col) {
    float keep = 1.f - alpha;
    p.x = alpha * col.x + keep * p.x;
    p.y = alpha * col.y + keep * p.y;
    p.z = alpha * col.z + keep * p.z;
    p.w = p.w + alpha;
}

// Blend circle i into pixel p if it covers the pixel centre (px, py).
__device__ __forceinline__ void shade_pixel(float4& p, float4 c, const float* __restrict__ colors,
                                            int i, float px, float py, bool snow) {
    float d2 = dist2(c, px, py);
    if (d2 > c.w * c.w) return;
    float alpha;
    float3 col;
    if (snow) {
        snow_shade(d2, c, alpha, col);
    } else {
        alpha = FLAT_ALPHA;
        col = make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]);
    }
    blend(p, alpha, col);
}
