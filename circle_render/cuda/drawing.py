"""What both CUDA drawing paths share (docs/drawing.md): a drawing's buffers on the device, its
clear, its compile options and its output.

cuda-tiled (cuda/tiled.py, TiledDrawingPath) and cuda (cuda/drawn.py, DrawnPath) draw a scene
with a ``Drawing`` into an image of premultiplied colour P and output alpha A, over each row's
clear (P, A) (the background, or the shading's own opaque clear). Reading the picture
(``output``) turns it into straight colour once, on the GPU (kernels/finish_drawing.cu), only
when the background is not opaque; with an opaque one A is 1 and P is the picture.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.constants import CLEAR_THREADS, EDGE_HALF, drawing_defines
from circle_render.cpu.reference_drawing import clear_planes
from circle_render.cuda.module import Defines, Launch, i32, load_module
from circle_render.drawing.paint import Drawing
from circle_render.scenes.scene import FLAT, Scene
from circle_render.util import ceil_div

f32 = np.float32


def drawing_options(scene: Scene) -> Defines:
    """The compile defines of a drawn scene's kernels: its options and its shading."""
    drawing = scene.drawing
    assert drawing is not None
    options = drawing_defines(drawing.antialias, drawing.outlined, drawing.opaque)
    return options | {"SNOW_SCENE": int(scene.shading != FLAT)}


def box_reach(scene: Scene, side: int) -> np.ndarray:
    """(n,) float32: how far each circle's pixel box reaches around its centre, in picture
    units, as the reference adds it (reference_drawing.Prepared.bounds): the outline's outer
    radius R + w/2 (or R), plus a pixel, 1/S, with anti-aliasing."""
    drawing = scene.drawing
    assert drawing is not None
    reach = scene.radius if drawing.edge_width is None else scene.radius + EDGE_HALF * drawing.edge_width
    if drawing.antialias:
        reach = reach + f32(1) / f32(side)
    return np.ascontiguousarray(reach, dtype=np.float32)


class DeviceDrawing:
    """A drawing on the device beside its DeviceScene and DeviceImage: ``rgba`` (n, 4), and with
    outlines ``edge_rgba`` (n, 4) and ``edge_width`` (n,) (without: one-element placeholders the
    kernels, compiled without DRAW_OUTLINED, never read); the image's row clears replaced by the
    drawing's (P, A); ``straight``, the picture in straight colour when the background is not
    opaque (None with an opaque one)."""

    def __init__(self, scene: Scene, image: Any):
        import cupy as cp
        drawing = scene.drawing
        assert isinstance(drawing, Drawing)
        self.drawing, self.image = drawing, image
        self.rgba = cp.asarray(drawing.rgba)
        self.edge_rgba = cp.asarray(drawing.edge_rgba if drawing.edge_rgba is not None else np.zeros((1, 4), f32))
        self.edge_width = cp.asarray(drawing.edge_width if drawing.edge_width is not None else np.zeros(1, f32))
        image.rows[...] = cp.asarray(np.ascontiguousarray(clear_planes(drawing, scene.shading, image.height).T))
        self.straight = None if drawing.opaque else cp.empty_like(image.pixels)
        self._finish = None
        if self.straight is not None:
            count = image.width * image.height
            self._finish = Launch(load_module("finish_drawing.cu").get_function("finish_drawing"),
                                  (ceil_div(count, CLEAR_THREADS),), (CLEAR_THREADS,),
                                  (image.pixels, self.straight, i32(count)))

    def output(self) -> Any:
        """The (H, W, 4) picture on the GPU in straight colour (finish_drawing, when the background
        is not opaque; else the image itself)."""
        if self._finish is None:
            return self.image.pixels
        self._finish()
        return self.straight
