"""Twins of kernels/sparse_bin.cu, the sparse path's lists: per-tile lists built chunk by chunk
(in no order within a chunk on the GPU, in circle order here; chunk-major with shared counting,
tile-major with global counting; kernels/sparse_lists.cuh), and the packed records (sparse_pack).
The kernels' twins are the functions named after them; the others are the steps they share."""
from __future__ import annotations

import numpy as np

from circle_render.twins.tiles import Box, TileTouch
from circle_render.util import ceil_div


def tile_touch(box: Box, tiles_x: int, tiles_y: int) -> TileTouch:
    """The (circle, tile) pairs of the circles' tile boxes."""
    return TileTouch(box, tiles_x, tiles_y, len(box[0]))


def sparse_count(touch: TileTouch, chunk: int | None) -> np.ndarray:
    """(chunks, tiles) int32: the circles of each chunk of ``chunk`` circles touching each tile
    (chunk None: global counting, one row, what sparse_bin_count counts)."""
    chunks = 1 if chunk is None else max(1, ceil_div(touch.n, chunk))
    b = np.zeros_like(touch.circle) if chunk is None else touch.circle // chunk
    return np.bincount(b * touch.tiles + touch.tile, minlength=chunks * touch.tiles).astype(np.int32).reshape(
        chunks, touch.tiles)


def sparse_offsets(counts: np.ndarray) -> np.ndarray:
    """Shared counting: (chunks, tiles + 1) int32, each chunk's counts scanned over the tiles
    (where each tile's segment begins among the chunk's entries), then the chunk's total."""
    scanned = np.cumsum(counts, axis=1, dtype=np.int64)
    return np.hstack([np.zeros((len(counts), 1), np.int64), scanned]).astype(np.int32)


def sparse_chunk_starts(offsets: np.ndarray) -> np.ndarray:
    """Shared counting: where each chunk's entries start in the list, chunks end to end; one
    more entry, the total."""
    return np.concatenate([[0], np.cumsum(offsets[:, -1], dtype=np.int64)]).astype(np.int32)


def sparse_bin_shared(touch: TileTouch, chunk: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shared counting, sparse_bin_shared's outputs: (offsets, starts, list), each chunk's row of tile
    offsets, where each chunk's entries start (then all of them) and the chunk-major list."""
    offsets = sparse_offsets(sparse_count(touch, chunk))
    return offsets, sparse_chunk_starts(offsets), sparse_list(touch, chunk)


def sparse_bin_count(touch: TileTouch) -> np.ndarray:
    """Global counting, sparse_bin_count's counts: (tiles,) int32, the circles touching each tile."""
    return sparse_count(touch, None)[0]


def sparse_bin_scan_tiles(counts: np.ndarray, group: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Global counting, (totals, local, group_totals) from the tiles' counts: the list
    lengths, each list's start within its group of ``group`` tiles, and each group's sum."""
    totals = np.asarray(counts, dtype=np.int64).reshape(-1)
    padded = np.zeros(ceil_div(len(totals), group) * group, dtype=np.int64)
    padded[:len(totals)] = totals
    per_group = padded.reshape(-1, group)
    local = (np.cumsum(per_group, axis=1) - per_group).reshape(-1)[:len(totals)]
    return totals.astype(np.int32), local.astype(np.int32), per_group.sum(axis=1).astype(np.int32)


def sparse_bin_scan_groups(group_totals: np.ndarray) -> np.ndarray:
    """Where each group's lists start, groups end to end; one more entry, the total."""
    return np.concatenate([[0], np.cumsum(group_totals, dtype=np.int64)]).astype(np.int32)


def list_starts(group_starts: np.ndarray, local: np.ndarray, group: int = 32) -> np.ndarray:
    """Where each tile's list starts (and, last, the total): group start plus place in the group."""
    return np.append(group_starts[np.arange(len(local)) // group] + local, group_starts[-1]).astype(np.int32)


def sparse_bin_emit(touch: TileTouch, chunk: int | None, tile: int) -> list[np.ndarray]:
    """Tile ``tile``'s list as segments (one per chunk, in chunk order; chunk None: global
    counting, one), each the circle indices in circle order (the GPU writes each segment in no
    order)."""
    circles = touch.of_tile(tile)
    if chunk is None:
        return [circles]
    chunks = max(1, ceil_div(touch.n, chunk))
    return np.split(circles, np.searchsorted(circles, np.arange(1, chunks) * chunk))


def sparse_list(touch: TileTouch, chunk: int | None) -> np.ndarray:
    """The whole list as the GPU lays it out, each segment in circle order: chunk by chunk, tile
    by tile within a chunk (shared counting), or tile by tile (chunk None: global counting)."""
    b = np.zeros_like(touch.circle) if chunk is None else touch.circle // chunk
    return touch.circle[np.lexsort((touch.circle, touch.tile, b))].astype(np.int32)


def sparse_pack(position: np.ndarray, radius: np.ndarray, color: np.ndarray) -> np.ndarray:
    """(n, 8) float32: each circle's (x, y, z, r) then its colour (r, g, b, 0)."""
    n = len(radius)
    out = np.zeros((n, 8), dtype=np.float32)
    out[:, :3], out[:, 3], out[:, 4:7] = position, radius, color
    return out
