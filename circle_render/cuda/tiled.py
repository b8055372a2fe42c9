"""The CUDA tiled renderer on CuPy: the course's design (kernels/render_tiled.cu).

One block per TILE_SIZE x TILE_SIZE tile; the block culls circles against its tile together
(a block scan compacts the hits in index order) and each thread blends them into its pixel.
NumPy twin: circle_render/twins/render_tiled.py (the reference, bit for bit on flat scenes).

A scene with a drawing (docs/drawing.md) takes the same design's drawing path, chosen once at
load: kernels/render_tiled_drawing.cu, compiled per option (cuda/drawing.py), bit for bit the
reference's (twin: circle_render/twins/render_tiled_drawing.py). The course's scenes never
compile or run it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.constants import TILE_SIZE
from circle_render.cuda.device_scene import OneKernelRenderer
from circle_render.cuda.drawing import DeviceDrawing, drawing_options
from circle_render.cuda.module import Launch, i32, load_module
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


class TiledCudaRenderer(OneKernelRenderer):
    """One block per TILE_SIZE x TILE_SIZE tile; circles culled per tile in shared memory."""

    name = "cuda-tiled"
    kernel_file, kernel = "render_tiled.cu", "render_tiled"     # OneKernelRenderer's tile grid
    draws_drawings = True
    drawing: DeviceDrawing | None = None

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.drawing = None
        if scene.drawing is None:
            super().load(scene, width, height)
        else:
            self._load_drawing(scene, width, height)

    def _load_drawing(self, scene: Scene, width: int, height: int) -> None:
        """The drawing path: the circles and the image as the course path keeps them, the
        drawing's buffers (cuda/drawing.py) and render_tiled_drawing for the options given."""
        from circle_render.cuda.device_scene import DeviceImage, DeviceScene
        self.width, self.height = width, height
        self.state = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self.drawing = d = DeviceDrawing(scene, self.image)
        module = load_module("render_tiled_drawing.cu", drawing_options(scene))
        self._render = Launch(module.get_function("render_tiled_drawing"),
                              (ceil_div(width, TILE_SIZE), ceil_div(height, TILE_SIZE)), self.block,
                              (self.state.circles, d.rgba, d.edge_rgba, d.edge_width, np.int32(scene.n),
                               self.image.pixels, i32(width), i32(height)))

    def circle_fields(self) -> tuple[str, ...]:
        """What update_circles takes (the Canvas's hook): a drawing's positions only (its kernel
        reads the circles' buffer each frame, but its colours from the drawing's own rgba)."""
        return super().circle_fields() if self.drawing is None else ("position",)

    def device_image(self) -> Any:
        """The (H, W, 4) float32 image on the GPU (a CuPy array), row 0 at the bottom; a
        drawing's in straight colour."""
        return self.image.pixels if self.drawing is None else self.drawing.output()

    def get_image(self) -> np.ndarray:
        image: np.ndarray = self.device_image().get()
        return image
