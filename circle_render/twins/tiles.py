"""Twins of kernels/tiles.cuh: circles' pixel boxes in tiles, and boxes packed relative to a
supertile ("cell")."""
from __future__ import annotations

import numpy as np

from circle_render.cpu.shading import circle_bounds


def tile_box(position, radius, width: int, height: int, tile: int):
    """Each circle's pixel box in tiles: inclusive (x0, x1, y0, y1) int64 arrays; (1, 0, 1, 0)
    where the pixel box is empty."""
    x0, x1, y0, y1 = (b.astype(np.int64) for b in circle_bounds(position, radius, width, height))
    empty = (x0 >= x1) | (y0 >= y1)
    box = (x0 // tile, (x1 - 1) // tile, y0 // tile, (y1 - 1) // tile)
    return tuple(np.where(empty, e, b) for b, e in zip(box, (1, 0, 1, 0)))


def pack_in_cell(box, cx, cy, cells: int) -> np.ndarray:
    """Boxes clamped to the cell of cells x cells tiles starting at tile (cx, cy), tile indices
    modulo 256 packed as bytes (x0, x1, y0, y1), uint32 (for boxes that touch the cell)."""
    x0, x1, y0, y1 = box
    bx0, bx1 = np.maximum(x0, cx) & 255, np.minimum(x1, cx + cells - 1) & 255
    by0, by1 = np.maximum(y0, cy) & 255, np.minimum(y1, cy + cells - 1) & 255
    return (bx0 | bx1 << 8 | by0 << 16 | by1 << 24).astype(np.uint32)
