"""Twins of kernels/sparse.cu, the sparse path: per-tile lists built chunk by chunk (in no
order within a chunk on the GPU, in circle order here) and a per-pixel blend in exact serial
order."""
from __future__ import annotations

import numpy as np

from circle_render.util import ceil_div


def tile_touch(box, tiles_x: int, tiles_y: int) -> np.ndarray:
    """(tiles, n) bool: which circles' tile boxes hold which tile (row by row)."""
    x0, x1, y0, y1 = box
    t = np.arange(tiles_x * tiles_y)
    tx, ty = (t % tiles_x)[:, None], (t // tiles_x)[:, None]
    return (x0 <= tx) & (tx <= x1) & (y0 <= ty) & (ty <= y1)


def sparse_count(touch: np.ndarray, chunk: int | None) -> np.ndarray:
    """(chunks, tiles) int32: the circles of each chunk of ``chunk`` circles touching each tile
    (chunk None: global counting, one row)."""
    tiles, n = touch.shape
    size = n if chunk is None else chunk
    chunks = 1 if chunk is None else max(1, ceil_div(n, chunk))
    padded = np.zeros((tiles, chunks * size), dtype=np.int32)
    padded[:, :n] = touch
    return padded.reshape(tiles, chunks, size).sum(axis=2, dtype=np.int32).T.copy()


def sparse_scan_chunks(counts: np.ndarray, group: int = 32):
    """(offsets, totals, local, group_totals): each tile's column of counts as its exclusive
    prefix (where each chunk's segment begins within the tile's list), the column sums, each
    list's start within its group of ``group`` tiles, and each group's sum."""
    offsets = (np.cumsum(counts, axis=0, dtype=np.int64) - counts).astype(np.int32)
    totals = counts.sum(axis=0, dtype=np.int64)
    padded = np.zeros(ceil_div(len(totals), group) * group, dtype=np.int64)
    padded[:len(totals)] = totals
    per_group = padded.reshape(-1, group)
    local = (np.cumsum(per_group, axis=1) - per_group).reshape(-1)[:len(totals)]
    return offsets, totals.astype(np.int32), local.astype(np.int32), per_group.sum(axis=1).astype(np.int32)


def sparse_scan_tiles(group_totals: np.ndarray) -> np.ndarray:
    """Where each group's lists start, groups end to end; one more entry, the total."""
    return np.concatenate([[0], np.cumsum(group_totals, dtype=np.int64)]).astype(np.int32)


def list_starts(group_starts: np.ndarray, local: np.ndarray, group: int = 32) -> np.ndarray:
    """Where each tile's list starts (and, last, the total): group start plus place in the group."""
    return np.append(group_starts[np.arange(len(local)) // group] + local, group_starts[-1]).astype(np.int32)


def sparse_emit(touch: np.ndarray, chunk: int | None) -> list[list[np.ndarray]]:
    """Per tile, its list's segments (one per chunk, in chunk order), each the circle indices in
    circle order (the GPU writes each segment in no order, as records that also carry the
    circle and its colour)."""
    n = touch.shape[1]
    size = n if chunk is None else chunk
    chunks = 1 if chunk is None else max(1, ceil_div(n, chunk))
    return [[np.nonzero(row[b * size:(b + 1) * size])[0].astype(np.int32) + b * size for b in range(chunks)]
            for row in touch]


def render_sparse(scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """Every pixel's circles blended in circle order: the reference image."""
    from circle_render.cpu.reference import reference_image
    return reference_image(scene, width, height, steps=steps)


def render_sparse_snow(scene, width: int, height: int, steps: int = 0) -> np.ndarray:
    """render_sparse's instance for snow shading: the same image."""
    return render_sparse(scene, width, height, steps)
