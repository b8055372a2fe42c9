"""The course's starter renderer (``-r cuda-starter``): fast and wrong, on purpose.

One thread per circle blends its whole pixel box into the image in global memory
(kernels/starter.cu). Overlapping circles race (updates are lost) and land in whatever order
their threads run, so it fails the course's check wherever circles overlap: the assignment
(docs/assignment.md) is to keep its speed and fix both.
"""
from __future__ import annotations

import numpy as np

from circle_render.constants import BLOCK_THREADS
from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.cuda.module import Launch, device_synchronize, load_module
from circle_render.scenes.scene import SNOW, Scene
from circle_render.util import ceil_div


class StarterCudaRenderer:
    """One thread per circle, blending straight into global memory: no order, no atomics."""

    name = "cuda-starter"

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.state = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self._render = Launch(load_module("starter.cu").get_function("render_starter"),
                              (max(1, ceil_div(scene.n, BLOCK_THREADS)),), (BLOCK_THREADS,),
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

    def device_image(self):
        return self.image.pixels

    def get_image(self) -> np.ndarray:
        return self.image.pixels.get()
