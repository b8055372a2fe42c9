"""Twins of ladder.cu (beside this file): the per-pixel loop draws the reference image; the reversed loop
draws the reference image of the circles in reverse order."""
from __future__ import annotations

import numpy as np


def render_pixel_loop(scene, width: int, height: int, steps: int = 0):
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)


def render_pixel_loop_reversed(scene, width: int, height: int, steps: int = 0):
    from circle_render.cpu.animation import advance
    from circle_render.cpu.reference import reference_image
    s = scene.copy()
    for _ in range(steps):
        advance(s)
    s.animation = None
    for field in ("position", "radius", "color", "velocity"):
        setattr(s, field, np.ascontiguousarray(getattr(s, field)[::-1]))
    return reference_image(s, width, height)
