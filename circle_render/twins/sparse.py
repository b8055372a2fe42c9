"""Twins of kernels/sparse.cu, the sparse path: per-tile lists (in no order on the GPU, in
circle order here) and a per-pixel blend in exact serial order."""
from __future__ import annotations

import numpy as np

from circle_render.twins.tiles import unpack_tile_box


def tile_touch(boxes: np.ndarray, tiles_x: int, tiles_y: int) -> np.ndarray:
    """(tiles, n) bool: which circles' packed tile boxes hold which tile (row by row)."""
    x0, x1, y0, y1 = unpack_tile_box(boxes)
    t = np.arange(tiles_x * tiles_y)
    tx, ty = (t % tiles_x)[:, None], (t // tiles_x)[:, None]
    return (x0 <= tx) & (tx <= x1) & (y0 <= ty) & (ty <= y1)


def tile_count(boxes: np.ndarray, tiles_x: int, tiles_y: int) -> np.ndarray:
    """int32 per tile: the circles whose box touches it."""
    return tile_touch(boxes, tiles_x, tiles_y).sum(axis=1, dtype=np.int32)


def tile_scan(counts: np.ndarray):
    """(starts, cursors) as tile_scan writes them: starts has one more entry, the total; the
    counts are zeroed for the next frame (not shown)."""
    starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int32)
    return starts, starts[:-1].copy()


def tile_emit(boxes: np.ndarray, tiles_x: int, tiles_y: int) -> list[np.ndarray]:
    """Each tile's list of circle indices, in circle order (the GPU writes them in no order)."""
    return [np.nonzero(row)[0].astype(np.int32) for row in tile_touch(boxes, tiles_x, tiles_y)]


def render_sparse(scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """Every pixel's circles blended in circle order: the reference image."""
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)


def render_sparse_snow(scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """render_sparse's instance for snow shading: the same image."""
    return render_sparse(scene, width, height, steps)
