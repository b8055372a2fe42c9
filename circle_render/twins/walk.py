"""Twin of kernels/walk.cu, the walk path's one stage: every tile walks every circle, front to
back, until every pixel is nearly opaque; the reference image within twins/draw.py's
``tolerance`` (the same tile walk)."""
from __future__ import annotations

import numpy as np

from circle_render.scenes.scene import Scene
from circle_render.twins.draw import draw, tolerance

__all__ = ["tolerance", "walk"]


def walk(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """The image the walk kernel approximates: every circle blended in order over the clear colour."""
    return draw(scene, width, height, steps)
