"""The CUDA tiled renderer on CuPy: the course's design (kernels/render_tiled.cu).

One block per TILE_SIZE x TILE_SIZE tile; the block culls circles against its tile together
(a block scan compacts the hits in index order) and each thread blends them into its pixel.
NumPy twin: circle_render/twins/render_tiled.py (the reference, bit for bit on flat scenes).
"""
from __future__ import annotations

from circle_render.cuda.device_scene import OneKernelRenderer


class TiledCudaRenderer(OneKernelRenderer):
    """One block per TILE_SIZE x TILE_SIZE tile; circles culled per tile in shared memory."""

    name = "cuda-tiled"
    kernel_file, kernel = "render_tiled.cu", "render_tiled"     # OneKernelRenderer's tile grid
