"""snow and snowsingle: falling snowflakes, shaded with the course's snow ramp.

The course's snow uses its own permutation-table noise, which is not public; this project
uses the integer-hash value noise in renderer/noise.py instead, so snow follows the facts file
but is not expected to match the course pixel for pixel.

snowsingle: the course ships one static frame of flakes as a data file that is not public.
Ours is the snow generator with every flake placed on screen (y uniform in [0, 1] instead of
above the top edge) and no animation: 100k flakes, one still frame.
"""
from __future__ import annotations

import numpy as np

from circle_render.scenes.rng import GlibcRand
from circle_render.scenes.scene import SNOW, Scene

f32 = np.float32
FLAKES = 100_000


def _flakes(name: str, seed: int, on_screen: bool) -> Scene:
    n = FLAKES
    rng = GlibcRand(seed)
    frac = (np.arange(n, dtype=np.float64) / n) ** 0.1
    depth = np.clip(frac.astype(np.float32) + (f32(-0.05) + f32(0.1) * rng.floats(n)), 0, 1)
    depth = np.sort(depth.astype(np.float32))[::-1].copy()
    u = rng.float_table(n, 3)                       # size, x, y
    size = (f32(0.08) - f32(0.0075)) + f32(0.015) * u[:, 0]
    r = (f32(1) - depth) * size + depth * size / f32(15)
    r = np.where(depth < f32(0.02), r * f32(3), np.maximum(r, f32(0.0075))).astype(np.float32)
    y = u[:, 2] if on_screen else f32(1) + r + f32(2) * u[:, 2]
    pos = np.stack([u[:, 1], y, depth], axis=1)
    return Scene(name, pos, r, np.ones((n, 3), dtype=np.float32), shading=SNOW,
                 animation=None if on_screen else "snow")


def snow(seed: int) -> Scene:
    return _flakes("snow", seed, on_screen=False)


def snowsingle(seed: int) -> Scene:
    return _flakes("snowsingle", seed, on_screen=True)
