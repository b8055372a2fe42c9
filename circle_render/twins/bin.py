"""Twins of kernels/bin.cu, the binning stage: circles listed, in circle order, under every
supertile their pixel box touches (with their tile box packed relative to the supertile). Supertiles are ``super_px`` pixels a side (whole tiles),
``grid`` of them a side; binning block b takes circles [b * chunk, (b + 1) * chunk), each of
its warps 32 * items of them."""
from __future__ import annotations

import numpy as np

from circle_render.constants import BIN_THREADS
from circle_render.twins.tiles import pack_in_cell, tile_box
from circle_render.util import ceil_div

BIN_WARPS = BIN_THREADS // 32


def super_touch(position, radius, width: int, height: int, tile: int, super_px: int,
                grid: int) -> np.ndarray:
    """(supertiles, n) bool: which circles touch which supertile (from their tile box, as the
    kernels decide it)."""
    per = super_px // tile
    box = tile_box(position, radius, width, height, tile)
    empty = box[0] > box[1]
    x0, x1, y0, y1 = (v // per for v in box)
    x0 = np.where(empty, 1, x0)                 # an empty box touches no supertile
    s = np.arange(grid * grid)
    sx, sy = (s % grid)[:, None], (s // grid)[:, None]
    return (x0 <= sx) & (sx <= x1) & (y0 <= sy) & (sy <= y1)


def bin_count(touch: np.ndarray, chunk: int):
    """(counts, warp_offsets) as bin_count writes them: counts[s * chunks + b] = circles of
    chunk b touching supertile s; warp_offsets[(b * BIN_WARPS + w) * supertiles + s] = those of
    chunk b's warps before warp w."""
    supertiles, n = touch.shape
    chunks = max(1, ceil_div(n, chunk))
    padded = np.zeros((supertiles, chunks * chunk), dtype=np.int32)
    padded[:, :n] = touch
    per_warp = padded.reshape(supertiles, chunks, BIN_WARPS, chunk // BIN_WARPS).sum(axis=3)
    counts = per_warp.sum(axis=2, dtype=np.int32)                              # (s, chunks)
    before = np.cumsum(per_warp, axis=2, dtype=np.int32) - per_warp           # (s, chunks, warps)
    return counts.reshape(-1), np.ascontiguousarray(before.transpose(1, 2, 0)).reshape(-1)


def bin_scan(counts: np.ndarray, supertiles: int):
    """(row prefix, totals) as bin_scan writes them: each supertile's row of counts scanned
    (exclusive), and each row's total, the length of that supertile's list."""
    rows = counts.reshape(supertiles, -1).astype(np.int64)
    return (np.cumsum(rows, axis=1) - rows).astype(np.int32).reshape(-1), rows.sum(axis=1).astype(np.int32)


def bin_emit(touch: np.ndarray, box, tiles_per_super: int, grid: int) -> np.ndarray:
    """The list as bin_emit writes it: (entries, 2) uint32 rows (circle index, its tile box
    packed relative to the supertile), supertile 0's list first, each in circle order."""
    s, i = np.nonzero(touch)               # row-major: by supertile, then by circle
    cx, cy = (s % grid) * tiles_per_super, (s // grid) * tiles_per_super
    packed = pack_in_cell(tuple(b[i] for b in box), cx, cy, tiles_per_super)
    return np.stack([i.astype(np.uint32), packed], axis=1)
