"""The numba kernels of ``cpu-fast`` (cpu/fast.py) that draw: each tile's circles blended in
index order, row span by row span (cpu/fast_bins.py makes the tiles' lists). The kernels take
named structures (cpu/fast_types.py) and are compiled with a forgiving on-disk cache
(cpu/fast_numba.py).

Every value that reaches a pixel is computed in float32 with the reference's operation order
(cpu/shading.py), and numba compiles without fastmath (no reassociation, no fused multiply-add),
so the image is bit-identical to the NumPy reference.
"""
from __future__ import annotations

import numba
import numpy as np

from circle_render.constants import FLAT_ALPHA, SNOW_FALLOFF
from circle_render.cpu.fast_blend import blend_pixels
from circle_render.cpu.fast_numba import cached_njit
from circle_render.cpu.fast_types import Fields

f32 = np.float32
ONE = f32(1)

# numba may type a global NumPy float32 as a float64 constant: every use is wrapped in f32()
HALF = FLAT_ALPHA          # flat blend: c <- HALF * colour + HALF * c
SHORT_ROW = 8              # rows of a box at most this wide are scanned pixel by pixel
SCAN_ROW = 32              # wider flat rows, up to this wide, are tested and blended in one pass
U1, U2, U3, U4 = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)


@numba.njit(inline="always")
def tile_rect(t: int, tiles_x: int, tile_w: int, tile_h: int, width: int, height: int) -> tuple[int, int, int, int]:
    """Tile t's pixels [x0, x1) x [y0, y1) (row-major tiles, the last ones cut by the image)."""
    x0, y0 = (t % tiles_x) * tile_w, (t // tiles_x) * tile_h
    return x0, min(x0 + tile_w, width), y0, min(y0 + tile_h, height)


@numba.njit(inline="always")
def squared_distance(px: float, cx: float, dy2: float) -> float:
    """The reference's squared distance, (dy*dy) + (dx*dx), in float32."""
    dx = px - cx
    return dy2 + dx * dx


@numba.njit(inline="always")
def row_span(px: float, r2: float, dy2: float, cx: np.ndarray, lo: int, hi: int, scale: int) -> tuple[int, int]:
    """The pixels [a, b) of one row within [lo, hi) with d2 <= r2 (cx: the pixel centres,
    ``scale`` pixels a unit). Along a row d2 falls then rises, so those pixels are one run,
    holding the pixel nearest the centre when there are any (near or a neighbour: the
    rounding). Float estimates of the ends are corrected by the exact test, so the span is
    exactly the pixels with d2 <= r2."""
    if hi - lo <= SHORT_ROW:                         # tiny boxes: test every pixel
        a = lo
        while a < hi and squared_distance(px, cx[a], dy2) > r2:
            a += 1
        b = hi
        while b > a and squared_distance(px, cx[b - 1], dy2) > r2:
            b -= 1
        return a, b
    centre = np.float64(px) * scale - 0.5            # in pixel indices
    near = min(max(int(np.floor(centre + 0.5)), lo), hi - 1)
    half = np.sqrt(max(np.float64(r2) - np.float64(dy2), 0.0)) * scale
    a = max(lo, min(int(np.ceil(centre - half)), near - 1))
    if squared_distance(px, cx[a], dy2) <= r2:
        while a > lo and squared_distance(px, cx[a - 1], dy2) <= r2:
            a -= 1
    else:
        a += 1
        while a <= near + 1 and a < hi and squared_distance(px, cx[a], dy2) > r2:
            a += 1
        if a > near + 1 or a == hi:
            return lo, lo                            # no pixel of this row is covered
    b = min(hi - 1, max(int(np.floor(centre + half)), near + 1, a))
    if squared_distance(px, cx[b], dy2) <= r2:
        while b < hi - 1 and squared_distance(px, cx[b + 1], dy2) <= r2:
            b += 1
    else:
        b -= 1
        while squared_distance(px, cx[b], dy2) > r2:              # stops at a, which is covered
            b -= 1
    return a, b + 1


@numba.njit(inline="always")
def nearest_column(px: float, cx: np.ndarray, lo: int, hi: int, scale: int) -> int:
    """The pixel of [lo, hi) whose float32 (px - cx)^2 is least: the one nearest the centre (a
    neighbour of the float64 estimate where rounding ties). d2 = dy2 + dx*dx is least there on
    every row, so a row has covered pixels exactly when this one is covered, and their run holds it."""
    near = min(max(int(np.floor(np.float64(px) * scale)), lo), hi - 1)
    best, least = near, squared_distance(px, cx[near], f32(0))
    for x in (near - 1, near + 1):
        if lo <= x < hi:
            d = squared_distance(px, cx[x], f32(0))
            if d < least:
                best, least = x, d
    return best


@numba.njit(inline="always")
def next_span(px: float, r2: float, dy2: float, cx: np.ndarray, lo: int, hi: int, m: int, pa: int,
              pb: int) -> tuple[int, int]:
    """row_span's run [a, b), found from the circle's previous row's run [pa, pb) (empty: from
    m, nearest_column's pixel): both runs hold m, so each end moves a pixel or two from where it
    was, each step an exact test; no square root a row."""
    if squared_distance(px, cx[m], dy2) > r2:
        return lo, lo                                    # no pixel of this row is covered
    a, b = (pa, pb - 1) if pa < pb else (m, m)           # b: the last covered pixel
    if squared_distance(px, cx[a], dy2) <= r2:
        while a > lo and squared_distance(px, cx[a - 1], dy2) <= r2:
            a -= 1
    else:
        a += 1
        while squared_distance(px, cx[a], dy2) > r2:    # stops at m, which is covered
            a += 1
    if squared_distance(px, cx[b], dy2) <= r2:
        while b < hi - 1 and squared_distance(px, cx[b + 1], dy2) <= r2:
            b += 1
    else:
        b -= 1
        while squared_distance(px, cx[b], dy2) > r2:    # stops at m
            b -= 1
    return a, b + 1


@numba.njit(inline="always")
def _blend_flat(row: np.ndarray, base: np.uint64, a: int, b: int, add_r: float, add_g: float, add_b: float) -> None:
    """c <- 0.5*colour + 0.5*c, alpha <- alpha + 0.5 over pixels [a, b) of one RGBA row
    (add_* = 0.5*colour; alpha: 0.5 + 1*alpha, the same sum)."""
    half = f32(HALF)
    blend_pixels(row, base + np.uint64(4 * a), b - a, (add_r, add_g, add_b, half), (half, half, half, ONE))


@numba.njit(inline="always")
def _blend_short(row: np.ndarray, base: np.uint64, a: int, b: int, add_r: float, add_g: float, add_b: float) -> None:
    """_blend_flat a pixel at a time, for runs of a few pixels."""
    half = f32(HALF)
    for j in range(base + np.uint64(4 * a), base + np.uint64(4 * b), U4):
        row[j] = add_r + half * row[j]
        row[j + U1] = add_g + half * row[j + U1]
        row[j + U2] = add_b + half * row[j + U2]
        row[j + U3] = row[j + U3] + half


@numba.njit(inline="always")
def _scan_flat(row: np.ndarray, base: np.uint64, lo: int, hi: int, px: float, dy2: float, r2: float, cx: np.ndarray,
               add_r: float, add_g: float, add_b: float) -> tuple[int, int]:
    """_blend_flat over the pixels of [lo, hi) with d2 <= r2, each tested as it is blended;
    returns their run [a, b) (as row_span). On rows of SHORT_ROW to SCAN_ROW pixels this one
    pass costs less than finding the run first (docs/perf-notes.md)."""
    half = f32(HALF)
    a, b = hi, lo
    for x in range(lo, hi):
        if squared_distance(px, cx[x], dy2) <= r2:
            j = base + np.uint64(4 * x)
            row[j] = add_r + half * row[j]
            row[j + U1] = add_g + half * row[j + U1]
            row[j + U2] = add_b + half * row[j + U2]
            row[j + U3] = row[j + U3] + half
            a, b = min(a, x), x + 1
    return (a, b) if a < b else (lo, lo)


@numba.njit(inline="always")
def _blend_snow(row: np.ndarray, base: np.uint64, a: int, b: int, px: float, dy2: float, cx: np.ndarray, radius: float,
                max_alpha: float, ramp: np.ndarray) -> None:
    """The course's snow shading (cpu/shading.py snow_alpha_color, blend_planes) over pixels
    [a, b) of one RGBA row."""
    last = ramp.shape[0] - 1
    steps = f32(last)
    falloff = f32(-1) * f32(SNOW_FALLOFF)
    for x in range(np.uint64(a), np.uint64(b)):
        d = np.sqrt(squared_distance(px, cx[x], dy2)) / radius
        scaled = d * steps
        entry = min(np.int32(scaled), last)
        weight = scaled - f32(entry)
        nxt = min(entry + 1, last)
        alpha = max_alpha * f32(np.exp(np.float64((falloff * d) * d)))
        keep = ONE - alpha
        j = base + x * U4
        for c in range(3):
            color = (ONE - weight) * ramp[entry, c] + weight * ramp[nxt, c]
            row[j + np.uint64(c)] = alpha * color + keep * row[j + np.uint64(c)]
        row[j + U3] = row[j + U3] + alpha


@numba.njit(inline="always")
def _fill(flat: np.ndarray, base: np.uint64, lo: int, hi: int, colour: np.ndarray) -> None:
    """Pixels [lo, hi) of one RGBA row set to colour (4,)."""
    c0, c1, c2, c3 = colour[0], colour[1], colour[2], colour[3]
    for j in range(base + np.uint64(4 * lo), base + np.uint64(4 * hi), U4):
        flat[j] = c0
        flat[j + U1] = c1
        flat[j + U2] = c2
        flat[j + U3] = c3


@numba.njit(inline="always")
def clear_painted(flat: np.ndarray, tile: int, ty0: int, ty1: int, width: int, background: np.ndarray,
                  painted: np.ndarray) -> None:
    """Rows [ty0, ty1) of a tile: what the last frames painted set back to each row's background
    colour (background (H, 4)), and its spans emptied (painted: Frame.painted)."""
    for y in range(ty0, ty1):
        _fill(flat, np.uint64(y) * np.uint64(4 * width), painted[tile, y - ty0, 0], painted[tile, y - ty0, 1],
              background[y])
        painted[tile, y - ty0, 0] = painted[tile, y - ty0, 1] = 0


@numba.njit(inline="always")
def open_tile(flat: np.ndarray, tile: int, frame: Fields, lists: Fields, width: int,
              height: int) -> tuple[int, int, int, int]:
    """Tile ``tile``'s pixels [tx0, tx1) x [ty0, ty1), its painted pixels first set back to the
    background where the frame clears (each tile draw's first step)."""
    _, clear, background, painted = frame
    tile_w, tile_h, tiles_x, _, _, _, _, _ = lists
    tx0, tx1, ty0, ty1 = tile_rect(tile, tiles_x, tile_w, tile_h, width, height)
    if clear:
        clear_painted(flat, tile, ty0, ty1, width, background, painted)
    return tx0, tx1, ty0, ty1


@numba.njit(inline="always")
def add_painted(row: np.ndarray, a: int, b: int) -> None:
    """Pixels [a, b) of a tile row added to its painted span (row: (2,) int32 [lo, hi))."""
    if a < b:
        if row[0] < row[1]:
            row[0], row[1] = min(row[0], a), max(row[1], b)
        else:
            row[0], row[1] = a, b


@numba.njit(inline="always")
def _follow_rows(flat: np.ndarray, painted: np.ndarray, cx: np.ndarray, cy: np.ndarray, width: int, px: float,
                 py: float, r2: float, lo: int, hi: int, y0: int, y1: int, ty0: int, add_r: float, add_g: float,
                 add_b: float) -> None:
    """One circle's flat rows y0..y1-1 of one tile, each row's run from the row before's
    (next_span), blended in one vectorised loop (_blend_flat)."""
    m = nearest_column(px, cx, lo, hi, width)
    a, b = lo, lo
    for y in range(y0, y1):
        dy = py - cy[y]
        a, b = next_span(px, r2, dy * dy, cx, lo, hi, m, a, b)
        _blend_flat(flat, np.uint64(y) * np.uint64(4 * width), a, b, add_r, add_g, add_b)
        add_painted(painted[y - ty0], a, b)


@numba.njit(inline="always")
def _draw_tile(flat: np.ndarray, tile: int, frame: Fields, lists: Fields, shading: Fields, width: int,
               height: int, following: bool) -> None:
    """Tile ``tile``: if the frame clears, its painted pixels set back to the background; then
    its circles blended, each pixel's in index order, their row spans added to what is painted.
    flat: the frame's image as one row of floats. ``following`` (a constant of each caller, so
    that the other's code is compiled out): flat rows of SHORT_ROW+1..SCAN_ROW pixels by
    _follow_rows instead of _scan_flat."""
    painted = frame[3]
    _, _, _, starts, _, boxes, data, _ = lists
    ramp, cx, cy, snow = shading
    tx0, tx1, ty0, ty1 = open_tile(flat, tile, frame, lists, width, height)
    for i in range(starts[tile], starts[tile + 1]):
        px, py, r = data[i, 0], data[i, 1], data[i, 2]
        r2 = r * r
        lo, hi = max(tx0, boxes[i, 0]), min(tx1, boxes[i, 1])
        if following and not snow and SHORT_ROW < hi - lo <= SCAN_ROW:
            _follow_rows(flat, painted[tile], cx, cy, width, px, py, r2, lo, hi, max(ty0, boxes[i, 2]),
                         min(ty1, boxes[i, 3]), ty0, data[i, 3], data[i, 4], data[i, 5])
            continue
        for y in range(max(ty0, boxes[i, 2]), min(ty1, boxes[i, 3])):
            dy = py - cy[y]
            dy2 = dy * dy
            base = np.uint64(y) * np.uint64(4 * width)
            if not snow and SHORT_ROW < hi - lo <= SCAN_ROW:
                a, b = _scan_flat(flat, base, lo, hi, px, dy2, r2, cx, data[i, 3], data[i, 4], data[i, 5])
            else:
                a, b = row_span(px, r2, dy2, cx, lo, hi, width)
                if snow:
                    _blend_snow(flat, base, a, b, px, dy2, cx, r, data[i, 6], ramp)
                elif hi - lo <= SHORT_ROW:
                    _blend_short(flat, base, a, b, data[i, 3], data[i, 4], data[i, 5])
                else:
                    _blend_flat(flat, base, a, b, data[i, 3], data[i, 4], data[i, 5])
            add_painted(painted[tile, y - ty0], a, b)


@cached_njit(parallel=True)
def render_tiles(frame: Fields, lists: Fields, shading: Fields, tiles: np.ndarray, slots: int) -> None:
    """Draw the given tiles (_draw_tile) in parallel, ``slots`` iterations, slot s taking tiles[s],
    tiles[s + slots], ... (fast_numba.tile_at_a_time says how threads take the slots): frame:
    Frame (the image, changed in place; whether it clears; the background; the painted spans,
    kept up to date); lists: Tiles, the tiles' lists; shading: Shading; tiles: (k,) int64
    row-major tile numbers (the structures: cpu/fast_types.py)."""
    flat, width, height = flat_frame(frame)
    for s in numba.prange(slots):
        for k in range(s, tiles.shape[0], slots):
            _draw_tile(flat, tiles[k], frame, lists, shading, width, height, False)


@cached_njit(parallel=True)
def render_tiles_following(frame: Fields, lists: Fields, shading: Fields, tiles: np.ndarray, slots: int) -> None:
    """render_tiles for a batch of mostly 9-32 px circles: their rows found from the row before's.
    A kernel of its own: the branch in render_tiles' tile loop cost the other scenes 4-15%
    (docs/perf-notes.md)."""
    flat, width, height = flat_frame(frame)
    for s in numba.prange(slots):
        for k in range(s, tiles.shape[0], slots):
            _draw_tile(flat, tiles[k], frame, lists, shading, width, height, True)


@numba.njit(inline="always")
def flat_frame(frame: Fields) -> tuple[np.ndarray, int, int]:
    """The frame's image as one row of floats, its width and height."""
    image = frame[0]
    return image.reshape(image.size), image.shape[1] // 4, image.shape[0]


@cached_njit(parallel=True)
def fill_rows(image: np.ndarray, colours: np.ndarray) -> None:
    """image[y, x] = colours[y] for every pixel: image (H, 4W) float32 RGBA rows, colours (H, 4)."""
    flat = image.reshape(image.size)
    width = image.shape[1] // 4
    for y in numba.prange(image.shape[0]):
        _fill(flat, np.uint64(y) * np.uint64(4 * width), 0, width, colours[y])
