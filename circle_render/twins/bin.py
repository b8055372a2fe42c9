"""Twins of kernels/bin.cu, the binning stages ("bin" and the gated "bin_back": the same steps):
circles listed, in circle order, under every supertile their pixel box touches (with their tile
box packed relative to the supertile). Supertiles are ``super_px`` pixels a side (whole tiles),
``grid`` of them a side; binning block b takes circles [b * chunk, (b + 1) * chunk), each of its
warps chunk / BIN_WARPS of them."""
from __future__ import annotations

import numpy as np

from circle_render.constants import BIN_THREADS
from circle_render.twins.tiles import Box, TileTouch, pack_in_cell, tile_box
from circle_render.util import ceil_div

BIN_WARPS = BIN_THREADS // 32


def super_touch(position: np.ndarray, radius: np.ndarray, width: int, height: int, tile: int, super_px: int,
                grid: int) -> TileTouch:
    """Which circles touch which supertile (from their tile box, as the kernels decide it), as
    (circle, supertile) pairs sorted by supertile, then circle."""
    per = super_px // tile
    box = tile_box(position, radius, width, height, tile)
    empty = box[0] > box[1]
    x0, x1, y0, y1 = (v // per for v in box)
    return TileTouch((np.where(empty, 1, x0), np.where(empty, 0, x1), y0, y1), grid, grid, len(empty))


def bin_count(touch: TileTouch, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """(counts, warp_offsets) as bin_count writes them: counts[b * supertiles + s] = circles of
    chunk b touching supertile s; warp_offsets[(b * BIN_WARPS + w) * supertiles + s] (uint16) =
    those of chunk b's warps before warp w."""
    chunks = max(1, ceil_div(touch.n, chunk))
    per_warp = np.bincount((touch.circle // (chunk // BIN_WARPS)) * touch.tiles + touch.tile,
                           minlength=chunks * BIN_WARPS * touch.tiles).reshape(chunks, BIN_WARPS, touch.tiles)
    counts = per_warp.sum(axis=1).astype(np.int32).reshape(-1)
    before = np.cumsum(per_warp, axis=1) - per_warp
    return counts, before.astype(np.uint16).reshape(-1)


def bin_scan(counts: np.ndarray, supertiles: int) -> tuple[np.ndarray, np.ndarray]:
    """(prefix, totals) as bin_scan writes them: each supertile's counts over the chunks
    scanned (exclusive; same layout as counts), and their totals, the lists' lengths."""
    rows = counts.reshape(-1, supertiles).astype(np.int64)
    return (np.cumsum(rows, axis=0) - rows).astype(np.int32).reshape(-1), rows.sum(axis=0).astype(np.int32)


def list_starts(totals: np.ndarray) -> np.ndarray:
    """starts as bin_emit writes it: where each supertile's list begins, then their total."""
    return np.concatenate([[0], np.cumsum(totals, dtype=np.int64)]).astype(np.int32)


def bin_emit(touch: TileTouch, box: Box, tiles_per_super: int, grid: int) -> np.ndarray:
    """The list as bin_emit writes it: (entries, 2) uint32 rows (circle index, its tile box
    packed relative to the supertile), supertile 0's list first, each in circle order."""
    s, i = touch.tile, touch.circle        # by supertile, then by circle
    cx, cy = (s % grid) * tiles_per_super, (s // grid) * tiles_per_super
    x0, x1, y0, y1 = box
    packed = pack_in_cell((x0[i], x1[i], y0[i], y1[i]), cx, cy, tiles_per_super)
    return np.stack([i.astype(np.uint32), packed], axis=1)


# bin_back's kernels are bin's over every circle, run only when a tile was deferred
bin_back_count, bin_back_scan, bin_back_emit = bin_count, bin_scan, bin_emit
