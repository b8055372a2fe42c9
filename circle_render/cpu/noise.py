"""The project's deterministic noise for snow: integer hashing plus smooth value noise.

Everything is uint32 or float32 with one rounding per operation, in the same order as
kernels/animate.cu (compiled with --fmad=false), so the GPU step matches this one.
"""
from __future__ import annotations

import numpy as np

f32 = np.float32
u32 = np.uint32


def hash_u32(x: np.ndarray) -> np.ndarray:
    """A 32-bit integer mixer (xorshift-multiply); uint32 in, uint32 out."""
    x = np.asarray(x, dtype=np.uint32)
    with np.errstate(over="ignore"):
        x = x ^ (x >> u32(16))
        x = x * u32(0x7FEB352D)
        x = x ^ (x >> u32(15))
        x = x * u32(0x846CA68B)
        x = x ^ (x >> u32(16))
    return x


def unit_float(h: np.ndarray) -> np.ndarray:
    """The top 24 bits of a hash as a float32 in [0, 1), exactly."""
    return (h >> u32(8)).astype(np.float32) * f32(1.0 / 16777216.0)


def _lattice(ix: np.ndarray, iy: np.ndarray, salt: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        key = ix.astype(np.uint32) * u32(0x9E3779B1) ^ iy.astype(np.uint32) * u32(0x85EBCA77)
    return unit_float(hash_u32(key ^ u32(salt))) * f32(2) - f32(1)


def value_noise(x: np.ndarray, y: np.ndarray, salt: int) -> np.ndarray:
    """Smoothly interpolated lattice noise in [-1, 1] at float32 points (x, y)."""
    fx0, fy0 = np.floor(x), np.floor(y)
    ix, iy = fx0.astype(np.int32), fy0.astype(np.int32)
    tx, ty = x - fx0, y - fy0
    sx = tx * tx * (f32(3) - f32(2) * tx)
    sy = ty * ty * (f32(3) - f32(2) * ty)
    a, b = _lattice(ix, iy, salt), _lattice(ix + 1, iy, salt)
    c, d = _lattice(ix, iy + 1, salt), _lattice(ix + 1, iy + 1, salt)
    top = a + sx * (b - a)
    bottom = c + sx * (d - c)
    return top + sy * (bottom - top)
