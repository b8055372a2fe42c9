// One animation step per launch, one thread per circle: the GPU twin of renderer/animation.py.
// Circles are float4 (x, y, z, radius); velocities are 3 floats per circle.
#include "noise.cuh"

#define DT (1.f / 60.f)

extern "C" __global__ void step_hypnosis(float4* circles, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r = circles[i].w;
    circles[i].w = r > .5f ? .02f : r + .01f;
}

extern "C" __global__ void step_bouncingballs(float4* circles, float* vel, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float y = circles[i].y, vy = vel[3 * i + 1];
    if (vy == 0.f && y == 0.f) return;
    const float old_y = y, old_vy = vy;
    if (y < 0.f && vy < 0.f) vy = vy * -.8f;
    vy = vy + -2.8f * DT;
    y = y + vy * DT;
    if (fabsf(vy - old_vy) < .001f && fabsf(y - old_y) < .001f && old_y < 0.f) {
        vy = 0.f;
        y = 0.f;
    }
    circles[i].y = y;
    vel[3 * i + 1] = vy;
}

extern "C" __global__ void step_fireworks(float4* circles, float* vel, const float2* spark_start,
                                          const float2* spark_vel, int fireworks, int sparks) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= fireworks * sparks) return;
    int i = fireworks + s;
    float4 c = circles[i];
    float4 centre = circles[s / sparks];
    c.x = c.x + vel[3 * i] * DT;
    c.y = c.y + vel[3 * i + 1] * DT;
    float dx = c.x - centre.x, dy = c.y - centre.y;
    if (sqrtf(dx * dx + dy * dy) > .25f) {
        c.x = spark_start[s].x;
        c.y = spark_start[s].y;
        vel[3 * i] = spark_vel[s].x;
        vel[3 * i + 1] = spark_vel[s].y;
    }
    circles[i] = c;
}

extern "C" __global__ void step_snow(float4* circles, float* vel, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float gravity = -1.8f, drag = 2.f, noise_x = 7.5f, noise_y = 5.f, freq = 6.f;
    float4 c = circles[i];
    float vx = vel[3 * i], vy = vel[3 * i + 1];
    float scale = fminf(fmaxf(1.f - c.z, .1f), 1.f);
    float nx = value_noise(c.x * freq, c.y * freq, 0u);
    float ny = value_noise(c.x * freq, c.y * freq, 1u);
    float ax = scale * (noise_x * nx) - drag * vx;
    float ay = scale * (gravity + noise_y * ny) - drag * vy;
    vx = vx + ax * DT;
    vy = vy + ay * DT;
    float x = c.x + vx * DT, y = c.y + vy * DT;
    if (x < -c.w || x > 1.f + c.w || y < -c.w) {
        unsigned h = hash_u32((unsigned)i ^ hash_u32(__float_as_uint(x) ^ __float_as_uint(y)));
        x = unit_float(h);
        y = 1.35f + c.w;
        vx = (unit_float(hash_u32(h)) - .5f) * .2f;
        vy = 0.f;
    }
    c.x = x;
    c.y = y;
    circles[i] = c;
    vel[3 * i] = vx;
    vel[3 * i + 1] = vy;
}
