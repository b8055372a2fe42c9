// The drawing options' arithmetic (docs/drawing.md, "The arithmetic"): the CUDA twin of
// circle_render/cpu/reference_drawing.py, shared by render_tiled_drawing.cu (cuda-tiled, serial
// order, bit for bit) and draw_drawing.cu (cuda, front to back). Every coverage and blend line is
// written with __fmul_rn / __fadd_rn / __fsub_rn / __fsqrt_rn, so it rounds as NumPy does under
// any --fmad. The options are compile-time (constants.py's drawing_defines): DRAW_ANTIALIAS,
// DRAW_OUTLINED, DRAW_OPAQUE, SNOW_SCENE; one module per combination, no branch on them at run time.
#pragma once
#include "shade.cuh"

constexpr bool kAntialias = DRAW_ANTIALIAS != 0;
constexpr bool kOutlined = DRAW_OUTLINED != 0;
constexpr bool kOpaque = DRAW_OPAQUE != 0;
constexpr bool kSnow = SNOW_SCENE != 0;

// What a pixel test needs of one radius Q, computed once per circle (reference_drawing.Radius):
// anti-aliased: x = rq (ink-corrected radius in pixels), y = cap; aliased: x = Q*Q, or -1 when
// Q <= 0 (no pixel has d2 <= -1: the reference's "Q > 0 and d2 <= Q*Q").
__device__ __forceinline__ float2 radius_of(float q, float scale) {
    if (kAntialias) {
        const float p = __fmul_rn(fmaxf(q, 0.f), scale);
        const float p2 = __fmul_rn(p, p);
        return make_float2(__fsqrt_rn(fmaxf(__fsub_rn(p2, AA_INK), 0.f)), fminf(1.f, __fmul_rn(AA_PI, p2)));
    }
    return make_float2(q > 0.f ? __fmul_rn(q, q) : -1.f, 0.f);
}

// cov(Q) at squared distance d2 (picture units) and distance dp (pixels; anti-aliased only).
__device__ __forceinline__ float coverage(float2 r, float d2, float dp) {
    if (kAntialias) return fminf(fmaxf(__fadd_rn(__fsub_rn(r.x, dp), AA_RAMP), 0.f), r.y);
    return d2 <= r.x ? 1.f : 0.f;
}

// One circle as the pixel loops read it: its centre, depth and radius, the radii's values (fill;
// outline's outer and inner), the fill colour and alpha, the edge colour and alpha, and `inside`:
// anti-aliased, a squared distance within which the fill's coverage is exactly its cap (no square
// root needed), -1 if none.
struct DrawnCircle {
    float4 c;                 // x, y, z, r (picture units)
    float4 rgba;              // fill r, g, b, alpha (straight)
    float4 edge;              // edge r, g, b, alpha (outlined)
    float2 fill, outer, inner;
    float inside;
    float far;                // cuda's draw: a squared distance beyond which no layer reaches
};

// The circle's radii in picture units as the reference makes them: R, R + w/2, R - w/2.
__device__ __forceinline__ DrawnCircle drawn_circle(float4 c, float4 rgba, float4 edge, float width, float scale) {
    DrawnCircle d;
    d.c = c;
    d.rgba = rgba;
    d.edge = edge;
    d.fill = radius_of(c.w, scale);
    if (kOutlined) {
        const float half = __fmul_rn(EDGE_HALF, width);
        d.outer = radius_of(__fadd_rn(c.w, half), scale);
        d.inner = radius_of(__fsub_rn(c.w, half), scale);
    }
    // d2 <= inside => dp <= rq - AA_RAMP with room for every rounding (AA_INNER_MARGIN), so that
    // (rq - dp) + AA_RAMP >= 1 >= cap: coverage is cap exactly.
    const float t = __fsub_rn(d.fill.x, AA_RAMP);
    const float ti = __fdiv_rn(t, scale);
    d.inside = kAntialias && t > 0.f ? __fmul_rn(__fmul_rn(ti, ti), AA_INNER_MARGIN) : -1.f;
    d.far = 0.f;
    return d;
}

// The pixel box's reach around the centre (docs/drawing.md, "The pixel box"): the outline's
// outer radius (or R), plus a pixel (inv) with anti-aliasing; in float32 as the reference adds it.
__device__ __forceinline__ float drawn_reach(float r, float width, float inv) {
    float reach = kOutlined ? __fadd_rn(r, __fmul_rn(EDGE_HALF, width)) : r;
    if (kAntialias) reach = __fadd_rn(reach, inv);
    return reach;
}

// The pixel box [x0, x1) x [y0, y1): the course's formula with S = `side` on both axes,
// clamped to the width x height picture.
__device__ __forceinline__ PixelBox drawn_box(float4 c, float reach, float scale, int width, int height) {
    PixelBox b;
    b.x0 = min(max((int)__fmul_rn(__fsub_rn(c.x, reach), scale), 0), width);
    b.x1 = min(max((int)__fmul_rn(__fadd_rn(c.x, reach), scale) + 1, 0), width);
    b.y0 = min(max((int)__fmul_rn(__fsub_rn(c.y, reach), scale), 0), height);
    b.y1 = min(max((int)__fmul_rn(__fadd_rn(c.y, reach), scale) + 1, 0), height);
    return b;
}

// Snow shading at d2 as the reference computes it (cpu/shading.py, snow_alpha_color): shade.cuh's
// snow_shade rounded step by step, with the exponential in double rounded once to float (the
// correctly rounded expf the reference takes; CUDA's expf is within 2 ulp of it).
__device__ __forceinline__ void snow_drawn(float d2, float4 c, float& alpha, float3& col) {
    const float d = __fdiv_rn(__fsqrt_rn(d2), c.w);
    const float scaled = __fmul_rn(d, (float)SNOW_RAMP_LAST);
    const int base = min((int)fminf(scaled, (float)SNOW_RAMP_LAST), SNOW_RAMP_LAST);
    const float w = __fsub_rn(scaled, (float)base), keep = __fsub_rn(1.f, w);
    const float3 lo = snow_ramp(base), hi = snow_ramp(min(base + 1, SNOW_RAMP_LAST));
    col.x = __fadd_rn(__fmul_rn(keep, lo.x), __fmul_rn(w, hi.x));
    col.y = __fadd_rn(__fmul_rn(keep, lo.y), __fmul_rn(w, hi.y));
    col.z = __fadd_rn(__fmul_rn(keep, lo.z), __fmul_rn(w, hi.z));
    const float depth = __fadd_rn(SNOW_ALPHA_BASE, __fmul_rn(SNOW_ALPHA_DEPTH, __fsub_rn(1.f, c.z)));
    const float max_alpha = __fmul_rn(SNOW_MAX_ALPHA, fminf(fmaxf(depth, 0.f), 1.f));
    const float falloff = __fmul_rn(__fmul_rn(__fmul_rn(-1.f, SNOW_FALLOFF), d), d);
    alpha = __fmul_rn(max_alpha, (float)exp((double)falloff));
}

// The fill layer at a pixel: its effective alpha (0: nothing to blend) and colour. dp: the
// distance in pixels (anti-aliased; computed by the caller only where needed).
__device__ __forceinline__ float fill_layer(const DrawnCircle& s, float d2, float dp, float3& col) {
    float cov;
    if (kAntialias) cov = !kOutlined && d2 <= s.inside ? s.fill.y : coverage(s.fill, d2, dp);
    else cov = coverage(s.fill, d2, dp);
    if (!(cov > 0.f)) return 0.f;
    float alpha;
    if (kSnow) {
        snow_drawn(d2, s.c, alpha, col);
    } else {
        alpha = s.rgba.w;
        col = make_float3(s.rgba.x, s.rgba.y, s.rgba.z);
    }
    return kAntialias ? __fmul_rn(alpha, cov) : alpha;
}

// The outline layer at a pixel: a ring from the inner to the outer radius.
__device__ __forceinline__ float edge_layer(const DrawnCircle& s, float d2, float dp, float3& col) {
    col = make_float3(s.edge.x, s.edge.y, s.edge.z);
    if (kAntialias) return __fmul_rn(s.edge.w, __fsub_rn(coverage(s.outer, d2, dp), coverage(s.inner, d2, dp)));
    return d2 <= s.outer.x && !(d2 <= s.inner.x) ? s.edge.w : 0.f;
}

// The distance in pixels the anti-aliased coverage takes (0 when aliased: unused). Skipped for a
// fill-only pixel within `inside` (its coverage is cap).
__device__ __forceinline__ float pixel_distance(const DrawnCircle& s, float d2, float scale) {
    if (!kAntialias || (!kOutlined && d2 <= s.inside)) return 0.f;
    return __fmul_rn(__fsqrt_rn(d2), scale);
}

// Serial "over", premultiplied, where a > 0: P_k <- a*c_k + (1-a)*P_k, A <- a + (1-a)*A.
__device__ __forceinline__ void blend_over(float4& p, float a, float3 col) {
    if (!(a > 0.f)) return;
    const float om = __fsub_rn(1.f, a);
    p.x = __fadd_rn(__fmul_rn(a, col.x), __fmul_rn(om, p.x));
    p.y = __fadd_rn(__fmul_rn(a, col.y), __fmul_rn(om, p.y));
    p.z = __fadd_rn(__fmul_rn(a, col.z), __fmul_rn(om, p.z));
    p.w = __fadd_rn(a, __fmul_rn(om, p.w));
}
