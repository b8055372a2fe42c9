"""The numba kernels of ``cpu-fast`` (cpu/fast.py): binning circles to tiles, and blending each
tile's circles in index order, row span by row span.

Every value that reaches a pixel is computed in float32 with the reference's operation order
(cpu/shading.py), and numba compiles without fastmath (no reassociation, no fused multiply-add),
so the image is bit-identical to the NumPy reference. Compiled code is cached on disk
(``cache=True``); numba falls back to a user cache folder when the package's is read-only.
"""
from __future__ import annotations

import os

import numba
import numpy as np

from circle_render.constants import FLAT_ALPHA, SNOW_ALPHA_BASE, SNOW_ALPHA_DEPTH, SNOW_FALLOFF, SNOW_MAX_ALPHA

f32 = np.float32
ONE = f32(1)


# numba's default threading layer here is GNU OpenMP, whose waiting threads cost a frame tens of
# milliseconds on a machine busy with other work (a laptop, CI); its own workqueue layer does not.
# A user's NUMBA_THREADING_LAYER wins. Set in the environment too: numba re-reads its config from
# there when it compiles. Workqueue runs one parallel call at a time: fast.py locks.
if "NUMBA_THREADING_LAYER" not in os.environ:
    os.environ["NUMBA_THREADING_LAYER"] = numba.config.THREADING_LAYER = "workqueue"


def cached_njit(**options):
    """numba.njit with its on-disk cache (beside this file, or a user cache folder where that is
    read-only); where no folder is writable at all, compiled anew in each process."""
    def wrap(func):
        try:
            return numba.njit(cache=True, **options)(func)
        except RuntimeError:                         # numba: "no locator available"
            return numba.njit(**options)(func)
    return wrap

# numba may type a global NumPy float32 as a float64 constant: every use is wrapped in f32()
HALF = FLAT_ALPHA          # flat blend: c <- HALF * colour + HALF * c
SHORT_ROW = 8              # rows of a box at most this wide are scanned pixel by pixel
U1, U2, U3, U4 = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)


@cached_njit()
def bin_circles(boxes, data, tile_w, tile_h, tiles_x, tiles_y, max_entries):
    """Each tile's circles in index order: (starts, costs, ids, entry_boxes, entry_data) with
    tile t's ids in ids[starts[t]:starts[t + 1]] and its circles' box pixels in costs[t]; tiles are row-major, tile_w x tile_h pixels. More than
    ``max_entries`` (circle, tile) pairs: ids comes back empty (the caller takes bigger tiles).
    Each entry also gets a copy of its circle's box and data (prepare_circles'), so that a tile's
    walk reads its circles' records in a stream rather than scattered over the scene's.
    boxes: (n, 4) int32 pixel boxes x0, x1, y0, y1 ([x0, x1) x [y0, y1), clamped to the image)."""
    n = boxes.shape[0]
    x0, x1, y0, y1 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    counts = np.zeros(tiles_x * tiles_y + 1, dtype=np.int64)
    costs = np.zeros(tiles_x * tiles_y, dtype=np.int64)        # box pixels in each tile
    for i in range(n):
        if x0[i] < x1[i] and y0[i] < y1[i]:
            for ty in range(y0[i] // tile_h, (y1[i] - 1) // tile_h + 1):
                rows = min(y1[i], (ty + 1) * tile_h) - max(y0[i], ty * tile_h)
                for tx in range(x0[i] // tile_w, (x1[i] - 1) // tile_w + 1):
                    counts[ty * tiles_x + tx + 1] += 1
                    costs[ty * tiles_x + tx] += rows * (min(x1[i], (tx + 1) * tile_w) - max(x0[i], tx * tile_w))
    starts = np.cumsum(counts)
    if starts[-1] > max_entries:
        return starts, costs, np.empty(0, np.int32), np.empty((0, 4), np.int32), np.empty((0, 8), np.float32)
    fill = starts[:-1].copy()
    ids = np.empty(starts[-1], dtype=np.int32)
    entry_boxes = np.empty((starts[-1], 4), dtype=np.int32)
    entry_data = np.empty((starts[-1], 8), dtype=np.float32)
    for i in range(n):
        if x0[i] < x1[i] and y0[i] < y1[i]:
            for ty in range(y0[i] // tile_h, (y1[i] - 1) // tile_h + 1):
                for tx in range(x0[i] // tile_w, (x1[i] - 1) // tile_w + 1):
                    t = ty * tiles_x + tx
                    ids[fill[t]] = i
                    entry_boxes[fill[t]] = boxes[i]
                    entry_data[fill[t]] = data[i]
                    fill[t] += 1
    return starts, costs, ids, entry_boxes, entry_data


@numba.njit(inline="always")
def tile_rect(t, tiles_x, tile_w, tile_h, width, height):
    """Tile t's pixels [x0, x1) x [y0, y1) (row-major tiles, the last ones cut by the image)."""
    x0, y0 = (t % tiles_x) * tile_w, (t // tiles_x) * tile_h
    return x0, min(x0 + tile_w, width), y0, min(y0 + tile_h, height)


@numba.njit(inline="always")
def _d2(px, cx, dy2):
    """The reference's squared distance, (dy*dy) + (dx*dx), in float32."""
    dx = px - cx
    return dy2 + dx * dx


@numba.njit(inline="always")
def _row_span(px, r2, dy2, cx, lo, hi, width):
    """The covered pixels [a, b) of one row within [lo, hi). Along a row d2 falls then rises, so
    the covered pixels are one run, holding the pixel nearest the centre when there are any
    (near or a neighbour: the rounding). Float estimates of the ends are corrected by the exact
    test, so the span is exactly the pixels with d2 <= r2."""
    if hi - lo <= SHORT_ROW:                         # tiny boxes: test every pixel
        a = lo
        while a < hi and _d2(px, cx[a], dy2) > r2:
            a += 1
        b = hi
        while b > a and _d2(px, cx[b - 1], dy2) > r2:
            b -= 1
        return a, b
    centre = np.float64(px) * width - 0.5            # in pixel indices
    near = min(max(int(np.floor(centre + 0.5)), lo), hi - 1)
    half = np.sqrt(max(np.float64(r2) - np.float64(dy2), 0.0)) * width
    a = max(lo, min(int(np.ceil(centre - half)), near - 1))
    if _d2(px, cx[a], dy2) <= r2:
        while a > lo and _d2(px, cx[a - 1], dy2) <= r2:
            a -= 1
    else:
        a += 1
        while a <= near + 1 and a < hi and _d2(px, cx[a], dy2) > r2:
            a += 1
        if a > near + 1 or a == hi:
            return lo, lo                            # no pixel of this row is covered
    b = min(hi - 1, max(int(np.floor(centre + half)), near + 1, a))
    if _d2(px, cx[b], dy2) <= r2:
        while b < hi - 1 and _d2(px, cx[b + 1], dy2) <= r2:
            b += 1
    else:
        b -= 1
        while _d2(px, cx[b], dy2) > r2:              # stops at a, which is covered
            b -= 1
    return a, b + 1


@numba.njit(inline="always")
def _blend_flat(row, base, a, b, add_r, add_g, add_b):
    """c <- 0.5*colour + 0.5*c, alpha <- alpha + 0.5 over pixels [a, b) of one RGBA row
    (add_* = 0.5*colour). Unsigned indices: numba then skips its negative-index wraparound,
    which is what lets LLVM vectorise the loop."""
    half = f32(HALF)
    for j in range(base + np.uint64(4 * a), base + np.uint64(4 * b), U4):
        row[j] = add_r + half * row[j]
        row[j + U1] = add_g + half * row[j + U1]
        row[j + U2] = add_b + half * row[j + U2]
        row[j + U3] = row[j + U3] + half


@numba.njit(inline="always")
def _blend_snow(row, base, a, b, px, dy2, cx, radius, max_alpha, ramp):
    """The course's snow shading (cpu/shading.py snow_alpha_color, blend_planes) over pixels
    [a, b) of one RGBA row."""
    last = ramp.shape[0] - 1
    steps = f32(last)
    falloff = f32(-1) * f32(SNOW_FALLOFF)
    for x in range(np.uint64(a), np.uint64(b)):
        d = np.sqrt(_d2(px, cx[x], dy2)) / radius
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


@cached_njit(parallel=True)
def render_tiles(image, tiles, threads, tile_w, tile_h, tiles_x, starts, boxes, data, ramp, cx, cy, snow):
    """Blend every circle of the listed tiles into ``image``, each pixel's circles in index order.

    image: (H, 4W) float32, RGBA rows, modified in place; tiles: (k,) int64 row-major tile numbers, thread
    t takes tiles[t], tiles[t + threads], ...; starts, boxes, data: bin_circles' lists (starts,
    entry_boxes, entry_data); ramp: (5, 3) float32 snow colours; cx: (W,), cy: (H,) float32 pixel centres; snow: bool.
    """
    height, width = image.shape[0], image.shape[1] // 4
    flat = image.reshape(image.size)
    for t in numba.prange(threads):
        for k in range(t, tiles.shape[0], threads):
            tx0, tx1, ty0, ty1 = tile_rect(tiles[k], tiles_x, tile_w, tile_h, width, height)
            for i in range(starts[tiles[k]], starts[tiles[k] + 1]):
                px, py, r = data[i, 0], data[i, 1], data[i, 2]
                r2 = r * r
                lo, hi = max(tx0, boxes[i, 0]), min(tx1, boxes[i, 1])
                for y in range(max(ty0, boxes[i, 2]), min(ty1, boxes[i, 3])):
                    dy = py - cy[y]
                    dy2 = dy * dy
                    a, b = _row_span(px, r2, dy2, cx, lo, hi, width)
                    base = np.uint64(y) * np.uint64(4 * width)
                    if snow:
                        _blend_snow(flat, base, a, b, px, dy2, cx, r, data[i, 6], ramp)
                    else:
                        _blend_flat(flat, base, a, b, data[i, 3], data[i, 4], data[i, 5])


@cached_njit(parallel=True)
def fill_rows(image, colours):
    """image[y, x] = colours[y] for every pixel: image (H, 4W) float32 RGBA rows, colours (H, 4)."""
    for y in numba.prange(image.shape[0]):
        row = image[y]
        c0, c1, c2, c3 = colours[y, 0], colours[y, 1], colours[y, 2], colours[y, 3]
        for j in range(np.uint64(0), np.uint64(row.shape[0]), U4):
            row[j] = c0
            row[j + U1] = c1
            row[j + U2] = c2
            row[j + U3] = c3


@cached_njit(parallel=True)
def prepare_circles(pos, radius, color, width, height):
    """Per circle, packed so that a tile's walk reads two cache lines per circle:
    boxes (n, 4) int32: the pixel box x0, x1, y0, y1, exactly as cpu/shading.py circle_bounds
    (x0 = int((px - r) * W), x1 = int((px + r) * W) + 1, float32, truncated, clamped to [0, W];
    clamped in float first, so no integer overflow);
    data (n, 8) float32: px, py, r, 0.5 * colour (3, flat), snow's max alpha, 0."""
    n = radius.shape[0]
    boxes = np.empty((n, 4), np.int32)
    data = np.zeros((n, 8), np.float32)
    fw, fh = f32(width), f32(height)
    for i in numba.prange(n):
        px, py, r = pos[i, 0], pos[i, 1], radius[i]
        boxes[i, 0] = _clamped(int(min(max((px - r) * fw, f32(-1)), fw + 1)), width)
        boxes[i, 1] = _clamped(int(min(max((px + r) * fw, f32(-1)), fw + 1)) + 1, width)
        boxes[i, 2] = _clamped(int(min(max((py - r) * fh, f32(-1)), fh + 1)), height)
        boxes[i, 3] = _clamped(int(min(max((py + r) * fh, f32(-1)), fh + 1)) + 1, height)
        data[i, 0], data[i, 1], data[i, 2] = px, py, r
        for c in range(3):
            data[i, 3 + c] = f32(HALF) * color[i, c]
        depth_alpha = f32(SNOW_ALPHA_BASE) + f32(SNOW_ALPHA_DEPTH) * (ONE - pos[i, 2])
        data[i, 6] = f32(SNOW_MAX_ALPHA) * min(max(depth_alpha, f32(0)), ONE)
    return boxes, data


@numba.njit(inline="always")
def _clamped(v, size):
    return min(max(v, 0), size)
