"""The CUDA tiled renderer on CuPy: the course's design (kernels/render_tiled.cu).

Stages, each a method with a NumPy twin that the GPU tests compare against:
- ``clear``   -> circle_render.cpu.shading.clear_image (kernels/clear.cu)
- ``advance`` -> circle_render.cpu.animation.advance (kernels/animate.cu)
- ``render``  -> circle_render.cpu.reference (tiles, cooperative cull, per-pixel blend)
"""
from __future__ import annotations

import numpy as np

from circle_render.constants import BLOCK_THREADS, TILE_SIZE
from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.cuda.module import Launch, device_synchronize, load_module
from circle_render.scenes.scene import SNOW, Scene
from circle_render.util import ceil_div


class TiledCudaRenderer:
    """One block per TILE_SIZE x TILE_SIZE tile; circles culled per tile in shared memory."""

    name = "cuda-tiled"
    kernel_file = "render_tiled.cu"

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.state = DeviceScene(scene)
        self.image = DeviceImage(width, height, scene.shading)
        self._render = Launch(load_module(self.kernel_file).get_function("render_tiled"),
                              (ceil_div(width, TILE_SIZE), ceil_div(height, TILE_SIZE)), (BLOCK_THREADS,),
                              (self.state.circles, self.state.colors, np.int32(self.state.n),
                               self.image.pixels, np.int32(width), np.int32(height),
                               np.int32(scene.shading == SNOW)))

    def clear(self) -> None:
        """Fill the image with the clear colour."""
        self.image.clear()

    def advance(self) -> None:
        self.state.advance()

    def render(self) -> None:
        """Blend every circle into the image, tile by tile."""
        self._render()

    def synchronize(self) -> None:
        device_synchronize()

    def device_image(self):
        """The (H, W, 4) float32 image on the GPU (a CuPy array), row 0 at the bottom."""
        return self.image.pixels

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32 on the host, row 0 at the bottom."""
        return self.image.pixels.get()
