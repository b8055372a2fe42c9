"""Your renderer for the assignment (docs/assignment.md). Grade it, on a machine with an NVIDIA
GPU (docs/assignment.md, sections 2 and 3), with

    render check -r assignment/my_renderer.py:StudentRenderer

ScaffoldRenderer (circle_render/cuda/student.py) does the rest: it uploads the circles, makes
the image, compiles KERNEL, fills the course's parameter block if your kernel includes
course_compat.cuh, and clears, advances and synchronizes with the project's own kernels.
draw() launches the kernel in my_renderer.cu, which starts as the course's starter. Change the
kernel, and this file where you need more buffers (setup), kernels or a different launch shape
(draw). Editing my_renderer.cu (or a header it includes) is enough for the next run to compile
it again; `render compile assignment/my_renderer.cu` compiles it without a GPU.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from circle_render.cuda.student import ScaffoldRenderer

KERNEL = Path(__file__).resolve().with_name("my_renderer.cu")
THREADS = 256


class StudentRenderer(ScaffoldRenderer):
    name = "student"
    kernel_file = KERNEL
    use_graph = False           # True: render() replays a CUDA graph of draw() (handout, "Launch cost")

    def setup(self, scene) -> None:
        """Once per scene and size, after the upload: make your buffers and find your kernels."""
        self.kernel = self.module.get_function("render_circles")
        self.snow = np.int32(scene.shading == "snow")

    def draw(self) -> None:
        """Blend every circle into the image, in index order. This is yours."""
        n = self.scene.n
        blocks = max(1, (n + THREADS - 1) // THREADS)
        # scalars as NumPy types: CuPy passes a Python int as 64 bits, whatever the kernel says
        self.kernel((blocks,), (THREADS,), (self.scene.circles, self.scene.colors, np.int32(n),
                                            self.image.pixels, np.int32(self.width), np.int32(self.height),
                                            self.snow))
