"""Twins of kernels/sparse_draw.cu: every pixel's circles blended in circle order, exactly as the
serial reference does (the sparse draw restores the order per tile in shared memory), from either
list layout."""
from __future__ import annotations

import numpy as np

from circle_render.scenes.scene import Scene


def sparse_draw_shared(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """Every pixel's circles blended in circle order: the reference image (either shading)."""
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)


def sparse_draw_global(scene: Scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """The same from tile-major lists (global counting): the reference image."""
    return sparse_draw_shared(scene, width, height, steps)
