"""Twin of kernels/starter.cu: the picture the starter tries to draw. Where no two circles
overlap, the starter draws exactly this (tested); where they overlap it does not: its updates
race and ignore the circles' order (the point of the assignment)."""
from __future__ import annotations

import numpy as np

from circle_render.scenes.scene import Scene


def render_starter(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)
