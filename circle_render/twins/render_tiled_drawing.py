"""Twin of kernels/render_tiled_drawing.cu, cuda-tiled's drawing path: every circle of a tile
blended in order, its fill then its outline, as the reference's drawing path does
(cpu/reference_drawing.py), bit for bit: both round each operation alike. The kernel leaves
premultiplied colour and alpha in the image; finish_drawing.cu makes the picture."""
from __future__ import annotations

import numpy as np

from circle_render.cpu.reference_drawing import clear_planes, render_drawing
from circle_render.scenes.scene import Scene


def render_tiled_drawing(scene: Scene, width: int, height: int) -> np.ndarray:
    """(height, width, 4) float32 premultiplied P (r, g, b) and output alpha A, row 0 at the
    bottom, over the drawing's clear."""
    assert scene.drawing is not None
    planes = np.empty((4, height, width), dtype=np.float32)
    planes[...] = clear_planes(scene.drawing, scene.shading, height)[:, :, None]
    render_drawing(scene, planes, width, height)
    return np.ascontiguousarray(np.moveaxis(planes, 0, 2))
