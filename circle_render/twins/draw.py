"""Twins of kernels/draw.cu, the binned path's draw stages: each tile composites its circles front
to back and stops once every pixel is nearly opaque (T < T_EPS), which is serial blending up to
what the circles behind a finished pixel would still have added (at most T_EPS * the largest
colour) and rounding (the kernels fuse multiply-adds). So each twin is the reference image, and
tests allow that much (``tolerance``)."""
from __future__ import annotations

import numpy as np

from circle_render.constants import T_EPS
from circle_render.scenes.scene import Scene


def draw(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """The image the draw kernel approximates (either shading): every circle blended in order
    over the clear colour."""
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)


def draw_front(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """The front layer's draw: the tiles it finishes are the reference's (those it leaves open it
    writes nothing to, and draw_back draws them)."""
    return draw(scene, width, height, steps)


def draw_back(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """The tiles draw_front deferred, from every circle: with draw_front, the reference image."""
    return draw(scene, width, height, steps)


def tolerance(scene: Scene) -> float:
    """The largest |difference| from the twin that a draw kernel may show: T_EPS times the
    largest colour (1 for snow), plus float32 rounding."""
    top = float(scene.color.max()) if scene.n else 1.0
    return T_EPS * max(top, 1.0) + 2e-5
