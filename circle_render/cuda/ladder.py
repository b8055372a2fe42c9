"""The handout's per-pixel loops (kernels/ladder.cu) as renderers, for benchmarks/assignment_kit.py
and the tests: one thread per pixel, every circle in index order (or reversed)."""
from __future__ import annotations

from circle_render.cuda.device_scene import OneKernelRenderer


class PixelLoopRenderer(OneKernelRenderer):
    """A thread per pixel loops over every circle: right, and as slow as circles x pixels."""

    name = "pixel-loop"
    kernel_file, kernel = "ladder.cu", "render_pixel_loop"      # OneKernelRenderer's tile grid


class ReversedPixelLoopRenderer(PixelLoopRenderer):
    """The same loop from the last circle to the first: no races, the wrong order."""

    name = "pixel-loop-reversed"
    kernel = "render_pixel_loop_reversed"
