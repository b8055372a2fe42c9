"""The handout's per-pixel loops (kernels/ladder.cu) as renderers, for benchmarks/assignment_kit.py
and the tests: one thread per pixel, every circle in index order (or reversed)."""
from __future__ import annotations

import numpy as np

from circle_render.constants import BLOCK_THREADS, TILE_SIZE
from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.cuda.module import Launch, device_synchronize, load_module
from circle_render.scenes.scene import SNOW, Scene
from circle_render.util import ceil_div


class PixelLoopRenderer:
    """A thread per pixel loops over every circle: right, and as slow as circles x pixels."""

    name = "pixel-loop"
    kernel = "render_pixel_loop"

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.state = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self._render = Launch(load_module("ladder.cu").get_function(self.kernel),
                              (ceil_div(width, TILE_SIZE), ceil_div(height, TILE_SIZE)), (BLOCK_THREADS,),
                              (self.state.circles, self.state.colors, np.int32(scene.n), self.image.pixels,
                               np.int32(width), np.int32(height), np.int32(scene.shading == SNOW)))

    def clear(self) -> None:
        self.image.clear()

    def advance(self) -> None:
        self.state.advance()

    def render(self) -> None:
        self._render()

    def synchronize(self) -> None:
        device_synchronize()

    def get_image(self) -> np.ndarray:
        return self.image.pixels.get()


class ReversedPixelLoopRenderer(PixelLoopRenderer):
    """The same loop from the last circle to the first: no races, the wrong order."""

    name = "pixel-loop-reversed"
    kernel = "render_pixel_loop_reversed"
