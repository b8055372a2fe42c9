"""Your renderer for the assignment (docs/assignment.md). Grade it with

    render check -r assignment/my_renderer.py:StudentRenderer

The data upload, clear, advance, synchronize and get_image are done for you (with the
project's own kernels); render() launches the kernel in my_renderer.cu, which starts as the
course's starter. Change the kernel, and this file where you need more buffers, kernels or a
different launch shape. Editing my_renderer.cu (or a header it includes) is enough for the
next run to compile it again.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from circle_render.cuda.device_scene import DeviceImage, DeviceScene
from circle_render.cuda.module import device_synchronize, load_module

KERNEL = Path(__file__).resolve().with_name("my_renderer.cu")
THREADS = 256


class StudentRenderer:
    name = "student"
    needs_gpu = True            # render check says so in one line on a machine without one

    def load(self, scene, width: int, height: int) -> None:
        """Upload the circles and make the image; called once per scene and size."""
        self.width, self.height = width, height
        self.scene = DeviceScene(scene)      # .circles (n float4: x, y, z, r), .colors (3n), .n
        self.image = DeviceImage(width, height, scene.shading)    # .pixels: (height, width, 4)
        self.snow = np.int32(scene.shading == "snow")
        self.kernel = load_module(KERNEL).get_function("render_circles")

    def clear(self) -> None:
        """Fill the image with the clear colour (white, or the snow scenes' gradient)."""
        self.image.clear()

    def advance(self) -> None:
        """One animation step, on the GPU (nothing for still scenes)."""
        self.scene.advance()

    def render(self) -> None:
        """Blend every circle into the image, in index order. This is yours."""
        n = self.scene.n
        blocks = max(1, (n + THREADS - 1) // THREADS)
        # scalars as NumPy types: CuPy passes a Python int as 64 bits, whatever the kernel says
        self.kernel((blocks,), (THREADS,), (self.scene.circles, self.scene.colors, np.int32(n),
                                            self.image.pixels, np.int32(self.width), np.int32(self.height),
                                            self.snow))

    def synchronize(self) -> None:
        device_synchronize()

    def get_image(self) -> np.ndarray:
        """The image on the host: (height, width, 4) float32, row 0 at the bottom."""
        return self.image.pixels.get()
