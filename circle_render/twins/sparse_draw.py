"""Twin of kernels/sparse_draw.cu: every pixel's circles blended in circle order, exactly as the
serial reference does (render_sparse restores the order per tile in shared memory)."""
from __future__ import annotations

import numpy as np


def render_sparse(scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """Every pixel's circles blended in circle order: the reference image (either shading)."""
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)
