// Coverage, snow shading and blending: the CUDA twin of renderer/shading.py.
// Compiled with --fmad=false, so each line rounds exactly as the NumPy reference does.
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

// Normalised centre of pixel i: (1/size) * (i + 0.5).
__device__ __forceinline__ float pixel_centre(int i, int size) {
    return (1.f / (float)size) * ((float)i + 0.5f);
}

__device__ __forceinline__ float dist2(float4 c, float px, float py) {
    float dx = c.x - px, dy = c.y - py;
    return dx * dx + dy * dy;
}

__device__ __forceinline__ void snow_shade(float d2, float4 c, float& alpha, float3& col) {
    const float ramp[5][3] = {{1.f, 1.f, 1.f}, {1.f, 1.f, 1.f}, {.8f, .9f, 1.f},
                              {.8f, .9f, 1.f}, {.8f, .8f, 1.f}};
    float d = sqrtf(d2) / c.w;
    float scaled = d * 4.f;
    int base = min((int)scaled, 4);
    float w = scaled - (float)base;
    int next = min(base + 1, 4);
    col.x = (1.f - w) * ramp[base][0] + w * ramp[next][0];
    col.y = (1.f - w) * ramp[base][1] + w * ramp[next][1];
    col.z = (1.f - w) * ramp[base][2] + w * ramp[next][2];
    float max_alpha = .6f + .4f * (1.f - c.z);
    max_alpha = .5f * fminf(fmaxf(max_alpha, 0.f), 1.f);
    alpha = max_alpha * expf((-1.f * 4.f * d) * d);
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
        alpha = .5f;
        col = make_float3(colors[3 * i], colors[3 * i + 1], colors[3 * i + 2]);
    }
    blend(p, alpha, col);
}
