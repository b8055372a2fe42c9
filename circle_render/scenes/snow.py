"""snow and snowsingle: 100,000 snowflakes, shaded with the course's snow ramp.

snow (docs/course-facts.md, "snow"): depths from glibc's powf plus a draw, sorted
farthest first; per flake a size, x and y (above the screen), then the animation
(circle_render/cpu/animation.py: step_snow, with the course's cell noise).

snowsingle: the course reads it from a data file that is not public. The facts define it as
the snow scene after 401 animation steps (what frame 400 of snow draws), written as the
course writes particle files and read back as the course reads them (six decimals per field),
with no animation: one still frame.
"""
from __future__ import annotations

import functools

import numpy as np

from .libm import depth_powers
from .rng import GlibcRand
from .scene import SNOW, Scene

f32 = np.float32
FLAKES = 100_000
SNOWSINGLE_STEPS = 401          # snowsingle is snow as frame 400 draws it: 401 steps


def snow(seed: int) -> Scene:
    n = FLAKES
    rng = GlibcRand(seed)
    depth = np.clip(depth_powers(n) + (f32(-0.05) + f32(0.1) * rng.floats(n)), f32(0), f32(1))
    depth = np.sort(depth.astype(np.float32))[::-1].copy()
    u = rng.float_table(n, 3)                       # size, x, y
    size = (f32(0.08) - f32(0.0075)) + f32(0.015) * u[:, 0]
    r = (f32(1) - depth) * size + depth * size / f32(15)
    r = np.where(depth < f32(0.02), r * f32(3), np.maximum(r, f32(0.0075))).astype(np.float32)
    y = (f32(1) + r) + f32(2) * u[:, 2]
    pos = np.stack([u[:, 1], y, depth], axis=1)
    return Scene("snow", pos, r, np.ones((n, 3), dtype=np.float32), shading=SNOW, animation="snow")


@functools.lru_cache(maxsize=4)
def _snowsingle_text(seed: int) -> str:
    """The course's particle file of snow after SNOWSINGLE_STEPS steps. The steps are cpu-fast's
    compiled snow step, bit-identical to the NumPy one (tests/scenes/test_snow.py checks all 401):
    0.1 s instead of 1.6 s on two cores."""
    from circle_render.cpu.fast import PARALLEL
    from circle_render.cpu.fast_animation import advance
    from circle_render.io.scene_files import par_text
    s = snow(seed)
    for _ in range(SNOWSINGLE_STEPS):
        advance(s, PARALLEL)
    return par_text(s)


def snowsingle(seed: int) -> Scene:
    from circle_render.io.scene_files import parse_par
    scene = parse_par(_snowsingle_text(seed), "snowsingle")
    scene.name = "snowsingle"
    return scene
