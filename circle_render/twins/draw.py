"""Twin of kernels/draw.cu: each tile composites its circles front to back and stops once every
pixel is nearly opaque (T < T_EPS), which is serial blending up to what the circles behind a
finished pixel would still have added (at most T_EPS * the largest colour) and rounding (the
kernel fuses multiply-adds). So the twin is the reference image, and tests allow that much."""
from __future__ import annotations

import numpy as np

from circle_render.constants import T_EPS


def render_fast(scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """The image render_fast approximates (either shading): every circle blended in order over
    the clear colour."""
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)


def tolerance(scene) -> float:
    """The largest |difference| from the twin that render_fast may show: T_EPS times the
    largest colour (1 for snow), plus float32 rounding."""
    top = float(scene.color.max()) if scene.n else 1.0
    return T_EPS * max(top, 1.0) + 2e-5
