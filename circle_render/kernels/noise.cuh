// The CUDA twin of renderer/noise.py: integer hashing and smooth value noise.
#pragma once

__device__ __forceinline__ unsigned hash_u32(unsigned x) {
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

// The top 24 bits of a hash as a float in [0, 1), exactly.
__device__ __forceinline__ float unit_float(unsigned h) {
    return (float)(h >> 8) * (1.f / 16777216.f);
}

__device__ __forceinline__ float lattice(int ix, int iy, unsigned salt) {
    unsigned key = (unsigned)ix * 0x9E3779B1u ^ (unsigned)iy * 0x85EBCA77u;
    return unit_float(hash_u32(key ^ salt)) * 2.f - 1.f;
}

__device__ __forceinline__ float value_noise(float x, float y, unsigned salt) {
    float fx0 = floorf(x), fy0 = floorf(y);
    int ix = (int)fx0, iy = (int)fy0;
    float tx = x - fx0, ty = y - fy0;
    float sx = tx * tx * (3.f - 2.f * tx);
    float sy = ty * ty * (3.f - 2.f * ty);
    float a = lattice(ix, iy, salt), b = lattice(ix + 1, iy, salt);
    float c = lattice(ix, iy + 1, salt), d = lattice(ix + 1, iy + 1, salt);
    float top = a + sx * (b - a);
    float bottom = c + sx * (d - c);
    return top + sy * (bottom - top);
}
