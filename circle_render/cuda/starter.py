"""The course's starter renderer (``-r cuda-starter``): fast and wrong, on purpose.

One thread per circle blends its whole pixel box into the image in global memory
(kernels/starter.cu). Overlapping circles race (updates are lost) and land in whatever order
their threads run, so it fails the course's check wherever circles overlap: the assignment
(docs/assignment.md) is to keep its speed and fix both.
"""
from __future__ import annotations

from circle_render.constants import BLOCK_THREADS
from circle_render.cuda.device_scene import OneKernelRenderer
from circle_render.scenes.scene import Scene
from circle_render.util import ceil_div


class StarterCudaRenderer(OneKernelRenderer):
    """One thread per circle, blending straight into global memory: no order, no atomics."""

    name = "cuda-starter"
    kernel_file, kernel = "starter.cu", "render_starter"

    def grid(self, scene: Scene, width: int, height: int) -> tuple[int, ...]:
        return (max(1, ceil_div(scene.n, BLOCK_THREADS)),)
