"""The handout's per-pixel loops (ladder.cu, beside this file) as renderers, for
benchmarks/assignment_kit.py and tests/assignment/test_assignment_gpu.py: one thread per pixel, every
circle in index order (or reversed). Instrumentation, not part of the package: ladder.cu is
compiled by path with the project's constants (load_module's ``project=True``); its NumPy twins
are twin.py."""
from __future__ import annotations

from pathlib import Path

from circle_render.cuda.device_scene import OneKernelRenderer


class PixelLoopRenderer(OneKernelRenderer):
    """A thread per pixel loops over every circle: right, and as slow as circles x pixels."""

    name = "pixel-loop"
    kernel_file, kernel = Path(__file__).resolve().parent / "ladder.cu", "render_pixel_loop"   # the tile grid
    project_constants = True             # TILE_SIZE, BLOCK_THREADS: compiled as kernels/ files are


class ReversedPixelLoopRenderer(PixelLoopRenderer):
    """The same loop from the last circle to the first: no races, the wrong order."""

    name = "pixel-loop-reversed"
    kernel = "render_pixel_loop_reversed"
