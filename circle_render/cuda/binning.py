"""The fast renderer's binning stage in NumPy: the twin that kernels/render_fast.cu's
bin_count, bin_scan and bin_emit are tested against, plus the sizes the host picks.

Circles are listed, in circle order, under every supertile their pixel box touches. The image
is cut into SUPER_GRID x SUPER_GRID supertiles of ``supertile_px`` pixels, a multiple of
FAST_TILE (the fast renderer's tile), so that every render tile lies in exactly one supertile.
"""
from __future__ import annotations

import numpy as np

from circle_render.constants import BIN_MAX_ITEMS, BIN_TARGET_BLOCKS, BIN_THREADS, FAST_TILE, SUPER_GRID
from circle_render.cpu.shading import circle_bounds
from circle_render.util import ceil_div

SUPERTILES = SUPER_GRID * SUPER_GRID


def supertile_px(width: int, height: int, grid: int = SUPER_GRID) -> int:
    """Side of a supertile in pixels: whole tiles, ``grid`` of them covering the image."""
    tiles = ceil_div(max(width, height), FAST_TILE)
    return FAST_TILE * ceil_div(tiles, grid)


def items_per_thread(n: int) -> int:
    """Circles per binning thread: enough blocks to fill the GPU, a counts matrix kept small."""
    return int(min(BIN_MAX_ITEMS, max(1, ceil_div(n, BIN_THREADS * BIN_TARGET_BLOCKS))))


def chunk_size(n: int) -> int:
    """Circles per binning block (one column of the counts matrix)."""
    return BIN_THREADS * items_per_thread(n)


def chunks(n: int, chunk: int) -> int:
    """Number of binning chunks (columns of the counts matrix) for n circles."""
    return max(1, ceil_div(n, chunk))


NO_TILES = 0xFF         # packed tile box that touches no tile (x0 = 255 > x1 = 0)


def tile_boxes(position, radius, width: int, height: int, tile: int = FAST_TILE) -> np.ndarray:
    """Each circle's pixel box in tiles, packed as bytes (x0, x1, y0, y1), inclusive (uint32);
    NO_TILES where the box is empty. The twin of kernels/render_fast.cu:pack_tile_box."""
    x0, x1, y0, y1 = (b.astype(np.uint32) for b in circle_bounds(position, radius, width, height))
    t = tile
    packed = x0 // t | ((x1 - 1) // t) << 8 | (y0 // t) << 16 | ((y1 - 1) // t) << 24
    return np.where((x0 >= x1) | (y0 >= y1), np.uint32(NO_TILES), packed).astype(np.uint32)


def super_ranges(position, radius, width: int, height: int, super_px: int):
    """Inclusive supertile range (x0, x1, y0, y1) of each circle; x0 > x1 when its box is empty."""
    x0, x1, y0, y1 = circle_bounds(position, radius, width, height)
    empty = (x0 >= x1) | (y0 >= y1)
    r = [x0 // super_px, (x1 - 1) // super_px, y0 // super_px, (y1 - 1) // super_px]
    r[0] = np.where(empty, 1, r[0])
    r[1] = np.where(empty, 0, r[1])
    return tuple(a.astype(np.int64) for a in r)


def touches(ranges, s: int) -> np.ndarray:
    """Which circles touch supertile s (bool per circle)."""
    x0, x1, y0, y1 = ranges
    sx, sy = s % SUPER_GRID, s // SUPER_GRID
    return (x0 <= sx) & (sx <= x1) & (y0 <= sy) & (sy <= y1)


def bin_counts(ranges, chunk: int) -> np.ndarray:
    """(SUPERTILES, chunks) int32: circles of each chunk touching each supertile (bin_count)."""
    n = len(ranges[0])
    hit = np.zeros((SUPERTILES, chunks(n, chunk) * chunk), dtype=np.int32)
    for s in range(SUPERTILES):
        hit[s, :n] = touches(ranges, s)
    return hit.reshape(SUPERTILES, -1, chunk).sum(axis=2, dtype=np.int32)


def bin_row_scan(counts: np.ndarray):
    """Each supertile's row of counts scanned (exclusive), and each row's total (bin_scan)."""
    totals = counts.sum(axis=1, dtype=np.int64)
    prefix = np.cumsum(counts, axis=1, dtype=np.int64) - counts
    return prefix.astype(np.int32), totals.astype(np.int32)


def supertile_lists(ranges) -> list[np.ndarray]:
    """For each supertile, the indices of the circles touching it, in circle order (bin_emit)."""
    return [np.nonzero(touches(ranges, s))[0].astype(np.int32) for s in range(SUPERTILES)]


def list_capacity(radius: np.ndarray, width: int, height: int, super_px: int,
                  grid: int = SUPER_GRID) -> int:
    """An upper bound on the list entries of circles with these radii, wherever they are: a box
    of side L pixels touches at most L // super_px + 2 supertiles per axis."""
    r = np.asarray(radius, dtype=np.float64)
    def per_axis(size):
        return np.minimum(grid, (2 * r * size + 2) // super_px + 2)
    return int((per_axis(width) * per_axis(height)).sum())


def mean_depth(radius) -> float:
    """How many circles cover the average pixel, were none clipped: the circles' areas summed
    over the unit screen (radius in normalised units)."""
    r = np.asarray(radius, dtype=np.float64)
    return float(np.pi * np.sum(r * r))


def tile_lists(position, radius, width: int, height: int, tile: int) -> list[np.ndarray]:
    """For each tile (row by row), the circles whose pixel box touches it, in circle order: what
    tile_count / tile_scan / tile_emit list (the GPU lists them in no particular order)."""
    boxes = tile_boxes(position, radius, width, height, tile)
    tx, ty = ceil_div(width, tile), ceil_div(height, tile)
    x0, x1, y0, y1 = (boxes & 0xFF, boxes >> 8 & 0xFF, boxes >> 16 & 0xFF, boxes >> 24)
    out = []
    for t in range(tx * ty):
        x, y = t % tx, t // tx
        out.append(np.nonzero((x0 <= x) & (x <= x1) & (y0 <= y) & (y <= y1))[0].astype(np.int32))
    return out
