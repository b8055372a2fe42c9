"""The named structures cpu-fast's numba kernels take (cpu/fast_bins.py, fast_kernels.py,
fast_animation.py): each kernel takes a few of these instead of a dozen positional arguments.

numba takes a structure as the plain tuple of its fields (``fields``), which each kernel unpacks
by the same names in the same order (tests/cpu/test_cpu_fast_types.py checks that they agree): numba
types a plain tuple in its C dispatcher, a NamedTuple in Python, which costs a few microseconds
a call, several per frame, on frames of well under a millisecond (docs/perf-notes.md, "cpu-fast").
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np


class Circles(NamedTuple):
    """A scene's circles as the lists take them: position (n, 3), radius (n,) (the reach of
    its pixel box), color (n, 3), all float32; records (n, k) float32, what each entry of a
    drawing's circle holds (cpu/fast_drawing.py prepare_paint), or (0, 8) for a course scene,
    whose entries are made from the colours (fast_bins._record)."""

    position: np.ndarray
    radius: np.ndarray
    color: np.ndarray
    records: np.ndarray


class TileGrid(NamedTuple):
    """The image (width x height pixels) and its tiles: tile_w x tile_h pixels (powers of two),
    tiles_x x tiles_y of them, row-major; scale_x, scale_y: the pixels of one unit of the
    circles' coordinates along x and y (a circle's box is the course's formula with them:
    width and height for the course's scenes, S = max(width, height) for a drawing)."""

    width: int
    height: int
    tile_w: int
    tile_h: int
    tiles_x: int
    tiles_y: int
    scale_x: int
    scale_y: int


class Counts(NamedTuple):
    """What count_tiles finds: tile t's list is entries [starts[t], starts[t + 1]) (tiles + 1,);
    its circles' boxes cover costs[t] of its pixels (tiles,); list_tiles writes part p's circles
    of tile t from fill[p, t] on (parts, tiles); part p's circles on the image are
    shown_per_part[p] (parts,). All int64."""

    starts: np.ndarray
    costs: np.ndarray
    fill: np.ndarray
    shown_per_part: np.ndarray


class Entries(NamedTuple):
    """The lists' entries, tile by tile (the buffers may be longer than needed): ids (entries,)
    int32, the circles' indices; boxes (entries, 4) int32, their pixel boxes; data (entries, k)
    float32, what their blends need (fast_bins._record: k = 8; a drawing's records)."""

    ids: np.ndarray
    boxes: np.ndarray
    data: np.ndarray


class Tiles(NamedTuple):
    """Each tile's circles: tile t (row-major, tile_w x tile_h pixels, tiles_x to a row) lists
    entries [starts[t], starts[t + 1]) of boxes (entries, 4) int32, data (entries, k) float32 and
    ids (entries,) int32, and its circles' boxes cover costs[t] of its pixels (with repeats)."""

    tile_w: int
    tile_h: int
    tiles_x: int
    starts: np.ndarray
    costs: np.ndarray
    boxes: np.ndarray
    data: np.ndarray
    ids: np.ndarray


class Frame(NamedTuple):
    """The picture a frame draws into: image (H, 4W) float32, RGBA rows, changed in place;
    clear: the frame starts from the background; background (H, 4) float32, each row's clear
    colour (read only when clear); painted (tiles, tile_h, 2) int32, per tile row the pixels
    [lo, hi) that may differ from the background (none where lo >= hi), kept up to date."""

    image: np.ndarray
    clear: bool
    background: np.ndarray
    painted: np.ndarray


class Shading(NamedTuple):
    """How circles are shaded: ramp (5, 3) float32, snow's colours; cx (W,) and cy (H,) float32,
    the pixel centres; snow: snow shading, else flat."""

    ramp: np.ndarray
    cx: np.ndarray
    cy: np.ndarray
    snow: bool


class Paint(NamedTuple):
    """A scene's drawing as cpu-fast's drawing kernels take it (cpu/fast_drawing.py; the
    arithmetic is docs/drawing.md's): rgba (n, 4) fill colour and alpha; edge (n, 4) outline
    colour and alpha and edge_width (n,) its width, ((0, 4) and (0,) without outlines), all
    float32; scale: S, the pixels of one picture unit; antialias; outlined; snow: snow shading."""

    rgba: np.ndarray
    edge: np.ndarray
    edge_width: np.ndarray
    scale: int
    antialias: bool
    outlined: bool
    snow: bool


class Flakes(NamedTuple):
    """Snow's circles as its step moves them: position (n, 3), velocity (n, 3), radius (n,),
    float32, changed in place."""

    position: np.ndarray
    velocity: np.ndarray
    radius: np.ndarray


class Noise(NamedTuple):
    """The course's cell-noise tables (cpu/cell_noise.py): p_x, p_y (256,) int32, values float32."""

    p_x: np.ndarray
    p_y: np.ndarray
    values: np.ndarray


Fields = tuple[Any, ...]      # a structure as a kernel takes it (fields)


def fields(structure: NamedTuple) -> Fields:
    """A structure as a kernel takes it: the plain tuple of its fields (see the module's docstring)."""
    return tuple(structure)
