"""Twins of kernels/tiles.cuh: circles' pixel boxes in tiles, and boxes packed relative to a
supertile ("cell")."""
from __future__ import annotations

import numpy as np

from circle_render.cpu.shading import circle_bounds

Box = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]     # x0, x1, y0, y1: one value a circle


def tile_box(position: np.ndarray, radius: np.ndarray, width: int, height: int, tile: int) -> Box:
    """Each circle's pixel box in tiles: inclusive (x0, x1, y0, y1) int64 arrays; (1, 0, 1, 0)
    where the pixel box is empty."""
    x0, x1, y0, y1 = (b.astype(np.int64) for b in circle_bounds(position, radius, width, height))
    empty = (x0 >= x1) | (y0 >= y1)
    box = (x0 // tile, (x1 - 1) // tile, y0 // tile, (y1 - 1) // tile)
    x0b, x1b, y0b, y1b = (np.where(empty, e, b) for b, e in zip(box, (1, 0, 1, 0)))
    return x0b, x1b, y0b, y1b


def pack_in_cell(box: Box, cx: np.ndarray | int, cy: np.ndarray | int, cells: int) -> np.ndarray:
    """Boxes clamped to the cell of cells x cells tiles starting at tile (cx, cy), tile indices
    modulo 256 packed as bytes (x0, x1, y0, y1), uint32 (for boxes that touch the cell)."""
    x0, x1, y0, y1 = box
    bx0, bx1 = np.maximum(x0, cx) & 255, np.minimum(x1, cx + cells - 1) & 255
    by0, by1 = np.maximum(y0, cy) & 255, np.minimum(y1, cy + cells - 1) & 255
    return (bx0 | bx1 << 8 | by0 << 16 | by1 << 24).astype(np.uint32)


class TileTouch:
    """Which circles' boxes (in tiles, or in supertiles) hold which tiles, as (circle, tile)
    pairs sorted by tile, then circle (a dense tiles x circles matrix would not fit for
    micro2M). Empty boxes (x0 > x1) hold none."""

    def __init__(self, box: Box, tiles_x: int, tiles_y: int, n: int):
        x0, x1, y0, y1 = (np.asarray(b, dtype=np.int64) for b in box)
        w, h = np.maximum(x1 - x0 + 1, 0), np.maximum(y1 - y0 + 1, 0)
        count = w * h
        first = np.repeat(np.cumsum(count) - count, count)
        local = np.arange(int(count.sum()), dtype=np.int64) - first
        circle = np.repeat(np.arange(len(x0), dtype=np.int64), count)
        ww = np.repeat(w, count)
        tile = (np.repeat(y0, count) + local // ww) * tiles_x + np.repeat(x0, count) + local % ww
        order = np.lexsort((circle, tile))
        self.circle, self.tile = circle[order], tile[order]
        self.tiles, self.n = tiles_x * tiles_y, n

    def of_tile(self, t: int) -> np.ndarray:
        lo, hi = np.searchsorted(self.tile, [t, t + 1])
        return self.circle[lo:hi].astype(np.int32)


def tile_order(tiles_x: int, tiles_y: int) -> tuple[np.ndarray, np.ndarray]:
    """Which tile block b draws (kernels/tiles.cuh, tile_of_block): (tx, ty) int64 arrays over
    b: the border ring first (top row, bottom row, left column, right column), then the rest
    row by row."""
    b = np.arange(tiles_x * tiles_y, dtype=np.int64)
    if tiles_x <= 2 or tiles_y <= 2:
        return b % tiles_x, b // tiles_x
    return _ring(b, tiles_x, tiles_y)


def _ring(k: np.ndarray, w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Place k of a w x h grid drawn border first: top row, bottom row, left column, right
    column, then the inside row by row."""
    conds = [k < w, k < 2 * w, k < 2 * w + h - 2, k < 2 * w + 2 * (h - 2)]
    inner = k - 2 * w - 2 * (h - 2)
    iw = max(w - 2, 1)
    tx = np.select(conds, [k, k - w, np.zeros_like(k), np.full_like(k, w - 1)], 1 + inner % iw)
    ty = np.select(conds, [np.zeros_like(k), np.full_like(k, h - 1), 1 + k - 2 * w, 1 + k - 2 * w - (h - 2)],
                   1 + inner // iw)
    return tx, ty

