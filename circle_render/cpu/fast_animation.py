"""cpu-fast's animation step: the snow step compiled with numba, one flake at a time, every
float32 operation of cpu/animation.py step_snow in the same order (so the flakes are bit-identical
to the reference's); the other animated scenes have at most a few hundred circles, and their
NumPy steps (cpu/animation.py) are already quick. The kernel takes named structures
(cpu/fast_types.py).
"""
from __future__ import annotations

from contextlib import AbstractContextManager

import numba
import numpy as np

from circle_render.constants import (
    DT,
    SNOW_DRAG,
    SNOW_GRAVITY,
    SNOW_MIN_SCALE,
    SNOW_NOISE_DEPTH,
    SNOW_NOISE_POS,
    SNOW_NOISE_X,
    SNOW_NOISE_Y,
    SNOW_RESPAWN_NOISE,
    SNOW_RESPAWN_VX,
    SNOW_RESPAWN_X,
    SNOW_RESPAWN_Y,
)
from circle_render.cpu import animation
from circle_render.cpu.cell_noise import noise_tables
from circle_render.cpu.fast_numba import cached_njit, start_threads
from circle_render.cpu.fast_types import Fields, Flakes, Noise, fields
from circle_render.scenes.scene import Scene

f32 = np.float32


@numba.njit(inline="always")
def _noise(a: float, b: float, c: float, i: int, p_x: np.ndarray, p_y: np.ndarray,
           values: np.ndarray) -> tuple[float, float]:
    """cell_noise (cpu/cell_noise.py) of one point: float32 a, b, c truncated toward zero."""
    ia, ib, ic = np.int64(np.trunc(a)), np.int64(np.trunc(b)), np.int64(np.trunc(c))
    h = p_x[(ia * i) & 255]
    h = p_x[(h + ib) & 255]
    h = p_x[(h + ic) & 255]
    nx = values[h]
    h = p_y[ia & 255]
    h = p_y[(h + ib) & 255]
    h = p_y[(h + ic) & 255]
    return nx, values[h]


# numba may type a global NumPy float32 as a float64 constant: every use is wrapped in f32()
@cached_njit(parallel=True)
def snow_step(flakes: Fields, noise: Fields) -> None:
    """One snow step in place: flakes (Flakes), noise (Noise: the cell-noise tables). Numbered as
    in step_snow."""
    position, velocity, radius = flakes
    p_x, p_y, values = noise
    dt = f32(DT)
    for i in numba.prange(radius.shape[0]):
        x, y, z = position[i, 0], position[i, 1], position[i, 2]
        vx, vy, vz, r = velocity[i, 0], velocity[i, 1], velocity[i, 2], radius[i]
        s = f32(1) - z                                                                    # 1
        if s < f32(SNOW_MIN_SCALE):
            s = f32(SNOW_MIN_SCALE)
        if s > f32(1):
            s = f32(1)
        nx, ny = _noise(f32(SNOW_NOISE_POS) * x, f32(SNOW_NOISE_POS) * y, f32(SNOW_NOISE_DEPTH) * z, i,  # 2
                        p_x, p_y, values)
        nx, ny = nx * f32(SNOW_NOISE_X), ny * f32(SNOW_NOISE_Y)
        dx, dy = f32(SNOW_DRAG) * vx, f32(SNOW_DRAG) * vy                                   # 3
        x = x + vx * dt                                                                     # 4
        y = y + vy * dt
        z = z + vz * dt
        vx = vx + s * (nx + dx) * dt                                                        # 5
        vy = vy + s * ((f32(SNOW_GRAVITY) + ny) + dy) * dt
        if (y + r < f32(0)) or (x + r < f32(0)) or (x - r > f32(1)):                        # 6
            qx, qy = _noise(f32(SNOW_RESPAWN_NOISE) * x, f32(SNOW_RESPAWN_NOISE) * y,
                            f32(SNOW_RESPAWN_NOISE) * z, i, p_x, p_y, values)
            x = f32(SNOW_RESPAWN_X) + f32(SNOW_RESPAWN_X) * qx
            y = f32(SNOW_RESPAWN_Y) + r
            vx = f32(SNOW_RESPAWN_VX) * qy
            vy = f32(0)
        position[i, 0], position[i, 1], position[i, 2] = x, y, z
        velocity[i, 0], velocity[i, 1] = vx, vy


def advance(scene: Scene, lock: AbstractContextManager[object]) -> None:
    """cpu/animation.py advance, with the snow step compiled (``lock``: held around the
    parallel call, as cpu/fast.py does for every one)."""
    if scene.animation == "snow":
        start_threads()
        with lock:
            snow_step(fields(Flakes(scene.position, scene.velocity, scene.radius)), fields(Noise(*noise_tables())))
    else:
        animation.advance(scene)
