// One animation step per launch, one thread per circle: the GPU twin of
// circle_render/cpu/animation.py (compiled without contraction: every step equals the NumPy
// step bit for bit). Circles are float4 (x, y, z, radius); velocities are 3 floats per circle.
// DT and every other constant come from circle_render/constants.py (-D).

extern "C" __global__ void step_hypnosis(float4* circles, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r = circles[i].w;
    circles[i].w = r > HYPNOSIS_MAX_RADIUS ? HYPNOSIS_MIN_RADIUS : r + HYPNOSIS_GROWTH;
}

extern "C" __global__ void step_bouncingballs(float4* circles, float* vel, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float y = circles[i].y, vy = vel[3 * i + 1];
    if (vy == 0.f && y == 0.f) return;
    const float old_y = y, old_vy = vy;
    if (y < 0.f && vy < 0.f) vy = vy * BALL_BOUNCE;
    vy = vy + BALL_GRAVITY * DT;
    y = y + vy * DT;
    if (fabsf(vy - old_vy) < BALL_STOP_EPS && fabsf(y - old_y) < BALL_STOP_EPS && old_y < 0.f) {
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
    if (sqrtf(dx * dx + dy * dy) > SPARK_RANGE) {
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
    const float s = fminf(fmaxf(1.f - c.z, SNOW_MIN_SCALE), 1.f);
    float2 noise = cell_noise(SNOW_NOISE_POS * c.x, SNOW_NOISE_POS * c.y, SNOW_NOISE_DEPTH * c.z, i, perm, values);
    const float nx = noise.x * SNOW_NOISE_X, ny = noise.y * SNOW_NOISE_Y;
    const float dx = SNOW_DRAG * vx, dy = SNOW_DRAG * vy;
    c.x = c.x + vx * DT;
    c.y = c.y + vy * DT;
    c.z = c.z + vz * DT;
    vx = vx + s * (nx + dx) * DT;
    vy = vy + s * ((SNOW_GRAVITY + ny) + dy) * DT;
    if (c.y + c.w < 0.f || c.x + c.w < 0.f || c.x - c.w > 1.f) {
        noise = cell_noise(SNOW_RESPAWN_NOISE * c.x, SNOW_RESPAWN_NOISE * c.y, SNOW_RESPAWN_NOISE * c.z, i, perm, values);
        c.x = SNOW_RESPAWN_X + SNOW_RESPAWN_X * noise.x;
        c.y = SNOW_RESPAWN_Y + c.w;
        vx = SNOW_RESPAWN_VX * noise.y;
        vy = 0.f;
    }
    circles[i] = c;
    vel[3 * i] = vx;
    vel[3 * i + 1] = vy;
}
