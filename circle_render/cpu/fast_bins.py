"""The numba kernels that bin ``cpu-fast``'s circles (cpu/fast.py): each tile's list of circles
in index order, each entry with the circle's pixel box (as the reference computes it) and what
its blend needs, in two passes over the circles: count per tile, then list. The kernels take
named structures (cpu/fast_types.py).

Each pass has a parallel kernel and a serial one with the same body: waking numba's threads costs
more than the whole pass for a few thousand circles. The circles are cut into consecutive parts;
within a tile, part p's circles are listed before part p + 1's, so every list is in index order
however many parts there are.
"""
from __future__ import annotations

import numba
import numpy as np

from circle_render.constants import FLAT_ALPHA, SNOW_ALPHA_BASE, SNOW_ALPHA_DEPTH, SNOW_MAX_ALPHA
from circle_render.cpu.fast_numba import cached_njit
from circle_render.cpu.fast_types import Fields

f32 = np.float32
ONE = f32(1)


# numba may type a global NumPy float32 as a float64 constant: every use is wrapped in f32()
@numba.njit(inline="always")
def _pixels(p: float, r: float, scale: int, size: int) -> tuple[int, int]:
    """Pixels [lo, hi) of a circle at p with radius r along an axis of ``size`` pixels, ``scale``
    of them a unit, exactly as cpu/shading.py circle_bounds (scale = size) and the drawings'
    boxes (scale = S; cpu/reference_drawing.py): lo = int((p - r) * scale), hi = int((p + r) *
    scale) + 1 (float32, truncated), clamped to [0, size]; clamped in float first, so no
    integer overflow."""
    fs, top = f32(scale), f32(size) + ONE
    lo = _clamped(int(min(max((p - r) * fs, f32(-1)), top)), size)
    hi = _clamped(int(min(max((p + r) * fs, f32(-1)), top)) + 1, size)
    return lo, hi


@numba.njit(inline="always")
def _box(i: int, pos: np.ndarray, radius: np.ndarray, grid: Fields) -> tuple[int, int, int, int]:
    """Circle i's pixel box x0, x1, y0, y1 on the grid (TileGrid; _pixels along each axis)."""
    width, height, _, _, _, _, scale_x, scale_y = grid
    x0, x1 = _pixels(pos[i, 0], radius[i], scale_x, width)
    y0, y1 = _pixels(pos[i, 1], radius[i], scale_y, height)
    return x0, x1, y0, y1


@numba.njit(inline="always")
def _rows_on_image(i: int, pos: np.ndarray, radius: np.ndarray, scale_y: int, height: int) -> bool:
    """Whether circle i's box has rows on the image (_box's y0 < y1), tested first: it is
    cheaper than the whole box, and most of a scene such as snow's may be off the image."""
    y0, y1 = _pixels(pos[i, 1], radius[i], scale_y, height)
    return y0 < y1


@numba.njit(inline="always")
def _clamped(v: int, size: int) -> int:
    return min(max(v, 0), size)


@numba.njit(inline="always")
def snow_max_alpha(z: float) -> float:
    """Snow's largest alpha for a circle at depth z (cpu/shading.py snow_alpha_color)."""
    depth_alpha = f32(SNOW_ALPHA_BASE) + f32(SNOW_ALPHA_DEPTH) * (ONE - z)
    return f32(SNOW_MAX_ALPHA) * min(max(depth_alpha, f32(0)), ONE)


@numba.njit(inline="always")
def _record(i: int, pos: np.ndarray, radius: np.ndarray, color: np.ndarray, out: np.ndarray) -> None:
    """What circle i's blend needs, into out (8,) float32: px, py, r, 0.5 * colour (3, flat),
    snow's max alpha, and 0 (padding: a record is two 16-byte halves)."""
    out[0], out[1], out[2] = pos[i, 0], pos[i, 1], radius[i]
    for c in range(3):
        out[3 + c] = f32(FLAT_ALPHA) * color[i, c]
    out[6] = snow_max_alpha(pos[i, 2])
    out[7] = f32(0)


@numba.njit(inline="always")
def _log2(size: int) -> int:
    """log2 of a power of two (tile sides are: they are shifted by, not divided by)."""
    shift = 0
    while (1 << shift) < size:
        shift += 1
    if (1 << shift) != size:
        raise ValueError("tile sides must be powers of two")
    return shift


@numba.njit(inline="always")
def _count_part(part: int, parts: int, circles: Fields, grid: Fields, shifts: tuple[int, int], counts: np.ndarray,
                costs: np.ndarray, shown: np.ndarray) -> int:
    """counts[part, t]: the circles of this part touching tile t; costs[part, t]: their box
    pixels in it (shifts: log2 of the tile sides). The part's circles on the image are listed,
    in index order, in shown from the part's first index on; returns how many there are."""
    position, radius, _, _ = circles
    _, height, _, _, tiles_x, _, _, scale_y = grid
    sw, sh = shifts
    n = radius.shape[0]
    lo = part * n // parts
    k = lo
    for i in range(lo, (part + 1) * n // parts):
        if not _rows_on_image(i, position, radius, scale_y, height):
            continue
        x0, x1, y0, y1 = _box(i, position, radius, grid)
        if x0 < x1 and y0 < y1:
            shown[k] = i
            k += 1
            for ty in range(y0 >> sh, ((y1 - 1) >> sh) + 1):
                rows = min(y1, (ty + 1) << sh) - max(y0, ty << sh)
                for tx in range(x0 >> sw, ((x1 - 1) >> sw) + 1):
                    counts[part, ty * tiles_x + tx] += 1
                    costs[part, ty * tiles_x + tx] += rows * (min(x1, (tx + 1) << sw) - max(x0, tx << sw))
    return k - lo


@numba.njit(inline="always")
def _list_part(part: int, circles: Fields, grid: Fields, shifts: tuple[int, int], fill: np.ndarray, shown: np.ndarray,
               shown_per_part: np.ndarray, entries: Fields) -> None:
    """This part's circles on the image appended to their tiles' lists, tile t's from
    fill[part, t] on, each entry with its record (a drawing's, copied; else _record's): read
    here in index order and written once per entry, so the draw streams them."""
    position, radius, color, records = circles
    drawn = records.shape[0] > 0
    _, _, _, _, tiles_x, _, _, _ = grid
    ids, boxes, data = entries
    sw, sh = shifts
    n = radius.shape[0]
    lo = part * n // fill.shape[0]
    for k in range(lo, lo + shown_per_part[part]):
        i = shown[k]
        x0, x1, y0, y1 = _box(i, position, radius, grid)
        first = -1
        for ty in range(y0 >> sh, ((y1 - 1) >> sh) + 1):
            for tx in range(x0 >> sw, ((x1 - 1) >> sw) + 1):
                t = ty * tiles_x + tx
                e = fill[part, t]
                fill[part, t] = e + 1
                ids[e] = i
                boxes[e, 0], boxes[e, 1], boxes[e, 2], boxes[e, 3] = x0, x1, y0, y1
                if first < 0:
                    if drawn:
                        data[e] = records[i]
                    else:
                        _record(i, position, radius, color, data[e])
                    first = e
                else:
                    data[e] = data[first]


@numba.njit(inline="always")
def _shifts(grid: Fields) -> tuple[int, int]:
    """log2 of the grid's tile sides."""
    _, _, tile_w, tile_h, _, _, _, _ = grid
    return _log2(tile_w), _log2(tile_h)


@numba.njit(inline="always")
def _starts(counts: np.ndarray, costs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(starts (tiles + 1,), costs (tiles,), fill (parts, tiles)): where each tile's list
    starts, its circles' box pixels, and where each part's circles go in it."""
    parts, tiles = counts.shape
    starts = np.zeros(tiles + 1, dtype=np.int64)
    fill = np.empty((parts, tiles), dtype=np.int64)
    for t in range(tiles):
        e = starts[t]
        for part in range(parts):
            fill[part, t] = e
            e += counts[part, t]
        starts[t + 1] = e
    return starts, costs.sum(axis=0), fill


@cached_njit(parallel=True)
def count_tiles(circles: Fields, grid: Fields, parts: int, shown: np.ndarray) -> Fields:
    """Counts' fields (cpu/fast_types.py) for the circles (Circles) on the grid (TileGrid; tile
    sides powers of two): the circles are cut into ``parts`` consecutive ranges, counted in
    parallel; part p's circles on the image are listed in shown ((n,) int32) from its first
    index on, shown_per_part[p] of them."""
    _, _, _, _, tiles_x, tiles_y, _, _ = grid
    shifts = _shifts(grid)
    counts = np.zeros((parts, tiles_x * tiles_y), dtype=np.int64)
    costs = np.zeros((parts, tiles_x * tiles_y), dtype=np.int64)
    shown_per_part = np.zeros(parts, dtype=np.int64)
    for part in numba.prange(parts):
        shown_per_part[part] = _count_part(part, parts, circles, grid, shifts, counts, costs, shown)
    return (*_starts(counts, costs), shown_per_part)


@cached_njit()
def count_tiles_serial(circles: Fields, grid: Fields, shown: np.ndarray) -> Fields:
    """count_tiles on the calling thread, as one part."""
    _, _, _, _, tiles_x, tiles_y, _, _ = grid
    counts = np.zeros((1, tiles_x * tiles_y), dtype=np.int64)
    costs = np.zeros((1, tiles_x * tiles_y), dtype=np.int64)
    shown_per_part = np.zeros(1, dtype=np.int64)
    shown_per_part[0] = _count_part(0, 1, circles, grid, _shifts(grid), counts, costs, shown)
    return (*_starts(counts, costs), shown_per_part)


@cached_njit(parallel=True)
def list_tiles(circles: Fields, grid: Fields, counts: Fields, shown: np.ndarray, entries: Fields) -> None:
    """Every tile's list of circles into entries (Entries), at count_tiles' places (counts:
    Counts, whose fill is used up; shown: its circles on the image): a tile's walk reads its
    circles in a stream rather than scattered over the scene."""
    _, _, fill, shown_per_part = counts
    shifts = _shifts(grid)
    for part in numba.prange(fill.shape[0]):
        _list_part(part, circles, grid, shifts, fill, shown, shown_per_part, entries)


@cached_njit()
def list_tiles_serial(circles: Fields, grid: Fields, counts: Fields, shown: np.ndarray, entries: Fields) -> None:
    """list_tiles on the calling thread."""
    _, _, fill, shown_per_part = counts
    shifts = _shifts(grid)
    for part in range(fill.shape[0]):
        _list_part(part, circles, grid, shifts, fill, shown, shown_per_part, entries)
