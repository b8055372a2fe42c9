// One animation step per launch, one thread per circle: the GPU twin of renderer/animation.py.
// Circles are float4 (x, y, z, radius); velocities are 3 floats per circle.
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

// The course's cell noise (circle_render/cpu/cell_noise.py): perm is P_X then P_Y (256 ints
// each), values the 256 float32 values V.
__device__ __forceinline__ float2 cell_noise(float a, float b, float c, int i, const int* __restrict__ perm,
                                             const float* __restrict__ values) {
    const int ia = (int)a, ib = (int)b, ic = (int)c;      // truncation toward zero, as C's cast
    int h = __ldg(&perm[(int)((unsigned)ia * (unsigned)i & 255u)]);   // int32 product, low 8 bits
    h = __ldg(&perm[(h + ib) & 255]);
    h = __ldg(&perm[(h + ic) & 255]);
    const float x = __ldg(&values[h]);
    h = __ldg(&perm[256 + (ia & 255)]);
    h = __ldg(&perm[256 + ((h + ib) & 255)]);
    h = __ldg(&perm[256 + ((h + ic) & 255)]);
    return make_float2(x, __ldg(&values[h]));
}

// One step of the course's snow, in the facts' order (compiled without contraction, so every
// position and velocity equals the NumPy step's bit for bit).
extern "C" __global__ void step_snow(float4* circles, float* vel, int n, const int* __restrict__ perm,
                                     const float* __restrict__ values) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 c = circles[i];
    float vx = vel[3 * i], vy = vel[3 * i + 1];
    const float vz = vel[3 * i + 2];
    const float s = fminf(fmaxf(1.f - c.z, .1f), 1.f);
    float2 noise = cell_noise(10.f * c.x, 10.f * c.y, 255.f * c.z, i, perm, values);
    const float nx = noise.x * 7.5f, ny = noise.y * 5.f;
    const float dx = -2.f * vx, dy = -2.f * vy;
    c.x = c.x + vx * DT;
    c.y = c.y + vy * DT;
    c.z = c.z + vz * DT;
    vx = vx + s * (nx + dx) * DT;
    vy = vy + s * ((-1.8f + ny) + dy) * DT;
    if (c.y + c.w < 0.f || c.x + c.w < 0.f || c.x - c.w > 1.f) {
        noise = cell_noise(255.f * c.x, 255.f * c.y, 255.f * c.z, i, perm, values);
        c.x = .5f + .5f * noise.x;
        c.y = 1.35f + c.w;
        vx = 2.f * noise.y;
        vy = 0.f;
    }
    circles[i] = c;
    vel[3 * i] = vx;
    vel[3 * i + 1] = vy;
}
