"""Twins of kernels/tiles.cuh: circles' pixel boxes in tiles, packed into 32 bits."""
from __future__ import annotations

import numpy as np

from circle_render.constants import NO_TILES
from circle_render.cpu.shading import circle_bounds


def pack_tile_box(position, radius, width: int, height: int, tile: int) -> np.ndarray:
    """Each circle's pixel box in tiles, packed as bytes (x0, x1, y0, y1), inclusive (uint32);
    NO_TILES where the box is empty."""
    x0, x1, y0, y1 = (b.astype(np.uint32) for b in circle_bounds(position, radius, width, height))
    packed = x0 // tile | ((x1 - 1) // tile) << 8 | (y0 // tile) << 16 | ((y1 - 1) // tile) << 24
    return np.where((x0 >= x1) | (y0 >= y1), np.uint32(NO_TILES), packed).astype(np.uint32)


def unpack_tile_box(boxes: np.ndarray):
    """(x0, x1, y0, y1) int64 arrays of packed boxes (x0 > x1 for NO_TILES)."""
    b = boxes.astype(np.int64)
    return b & 0xFF, b >> 8 & 0xFF, b >> 16 & 0xFF, b >> 24 & 0xFF
