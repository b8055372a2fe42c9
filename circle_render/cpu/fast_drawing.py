"""The numba kernels of ``cpu-fast``'s drawing path (cpu/fast.py): a scene with a ``Drawing``
(colours with alpha, anti-aliasing, outlines, a background, any picture), drawn tile by tile as
the course's scenes are (the same lists, cpu/fast_bins.py), bit for bit the reference's
(cpu/reference_drawing.py; the arithmetic is docs/drawing.md's).

Every radius a circle draws with (the fill's R, an outline's R + w/2 and R - w/2) is prepared
once per circle (``prepare_paint``): the float32 q, rq and cap of the contract, and two
thresholds on the squared distance d2, found exactly: a pixel's coverage cov(d2) falls as d2
grows (every rounding is monotonic), so it is > 0 exactly for d2 <= pos, and equals cap (a
whole pixel, mostly) exactly for d2 <= inner. Along a row d2 falls then rises, so each is a run
of pixels found as the course's spans are (fast_kernels.row_span): the draw blends the runs
where the layer's alpha is one value with the course's loop (a*colour computed once), and
computes coverage pixel by pixel only on the anti-aliased fringe, a pixel or two each side.
Without anti-aliasing both thresholds are q*q and every pixel takes the first loop.

The image holds premultiplied colour P and the output alpha A (RGBA rows), blended as
P <- a*c + (1-a)*P, A <- a + (1-a)*A where a > 0, circle by circle in index order, each circle's
fill then its outline; ``unpremultiply`` turns it into straight colour once, where the
background is not opaque. numba compiles without fastmath, so every value is the reference's.
"""
from __future__ import annotations

import numba
import numpy as np

from circle_render.constants import AA_INK, AA_PI, SNOW_FALLOFF
from circle_render.cpu.fast_bins import snow_max_alpha
from circle_render.cpu.fast_blend import blend_pixels
from circle_render.cpu.fast_kernels import (
    SCAN_ROW,
    SHORT_ROW,
    add_painted,
    flat_frame,
    nearest_column,
    next_span,
    open_tile,
    row_span,
    squared_distance,
)
from circle_render.cpu.fast_numba import cached_njit
from circle_render.cpu.fast_types import Fields

f32 = np.float32
ONE, ZERO = f32(1), f32(0)
NONE = -1.0              # a threshold that no squared distance meets
POS, IN, RQ, CAP = 0, 1, 2, 3                    # a radius as the draw takes it: 4 values
# A drawn circle's record, copied into each of its list entries (fast_bins): its centre, snow's
# largest alpha and its radius R, its fill's radius and colour (r, g, b, alpha); with outlines
# the outer and inner radii and the outline's colour. 16 or 24 float32 values.
X, Y, MAX_ALPHA, RADIUS, FILL, COLOR, OUTER, INNER, EDGE = 0, 1, 2, 3, 4, 8, 12, 16, 20
RECORD, OUTLINED_RECORD = 16, 24
# numba may type a global NumPy float32 as a float64 constant: every use is wrapped in f32()


@numba.njit(inline="always")
def _cover(rq: float, cap: float, d2: float, scale: float) -> float:
    """Anti-aliased coverage at squared distance d2 (picture units): min(max((rq - dp) + 1/2,
    0), cap), dp = sqrt(d2) * S, the distance in pixels (cpu/reference_drawing.py Radius.cover)."""
    dp = np.sqrt(d2) * scale
    return min(max((rq - dp) + f32(0.5), ZERO), cap)


@numba.njit(inline="always")
def _holds(rq: float, cap: float, d2: float, scale: float, inner: bool) -> bool:
    """What a threshold marks: coverage > 0, or (inner) coverage == cap."""
    c = _cover(rq, cap, d2, scale)
    return c == cap if inner else c > ZERO


@numba.njit(inline="always")
def _adjacent(x: float, up: bool) -> float:
    """The float32 next to x >= 0, above or below it (below 0: NONE)."""
    if not up and x == ZERO:
        return f32(NONE)
    return f32(np.nextafter(f32(x), f32(3e38) if up else f32(-1)))


@numba.njit
def _threshold(rq: float, cap: float, scale: float, inner: bool, guess: float) -> float:
    """The largest float32 d2 >= 0 that _holds (NONE if not even 0 does): a few exact tests
    around the float64 estimate ``guess``, bisection if it is far off."""
    if not _holds(rq, cap, ZERO, scale, inner):
        return f32(NONE)
    lo, hi = ZERO, f32(-1)                      # lo holds; hi (when >= 0) does not
    x = f32(max(guess, 0.0))
    for _ in range(8):                          # step from the estimate towards the edge
        if _holds(rq, cap, x, scale, inner):
            lo = x
            x = _adjacent(x, True)
        else:
            hi = x
            x = _adjacent(x, False)
            if x < ZERO:
                return lo
        if hi >= ZERO and _adjacent(lo, True) == hi:
            return lo
    if hi < ZERO:                               # no edge found above: find one
        hi = f32(max(np.float64(lo), 1e-30) * 2.0)
        while _holds(rq, cap, hi, scale, inner):
            lo, hi = hi, f32(np.float64(hi) * 2.0)
    while _adjacent(lo, True) < hi:             # bisection by value down to neighbours
        mid = f32(0.5 * (np.float64(lo) + np.float64(hi)))
        if mid <= lo or mid >= hi:
            mid = _adjacent(lo, True)
        if _holds(rq, cap, mid, scale, inner):
            lo = mid
        else:
            hi = mid
    return lo


@numba.njit
def _prepare_radius(q: float, scale: float, antialias: bool, out: np.ndarray, at: int) -> None:
    """One radius (picture units) as the draw takes it, into out[at:at + 4]: (pos, inner, rq,
    cap) (see the module's docstring). Anti-aliased: p = max(q, 0) * S, rq = sqrt(max(p*p -
    1/12, 0)), cap = min(1, pi * p*p) in this order (docs/drawing.md); else coverage is
    d2 <= q*q where q > 0, one threshold, and cap 1."""
    if not antialias:
        t = q * q if q > ZERO else f32(NONE)
        out[at + POS], out[at + IN], out[at + RQ], out[at + CAP] = t, t, ZERO, ONE
        return
    p = max(q, ZERO) * scale
    p2 = p * p
    rq = np.sqrt(max(p2 - f32(AA_INK), ZERO))
    cap = min(ONE, f32(AA_PI) * p2)
    out[at + RQ], out[at + CAP] = rq, cap
    reach = (np.float64(rq) + 0.5) / scale
    pos = _threshold(rq, cap, scale, False, reach * reach)
    edge = (np.float64(rq) + 0.5 - np.float64(cap)) / scale
    out[at + POS] = pos
    out[at + IN] = _threshold(rq, cap, scale, True, edge * abs(edge)) if pos >= ZERO else f32(NONE)


@cached_njit(parallel=True)
def prepare_paint(circles: Fields, paint: Fields, reach: np.ndarray, records: np.ndarray) -> None:
    """Per circle, once a frame: its record (records (n, RECORD or OUTLINED_RECORD) float32: see
    the layout above; radii by _prepare_radius) and how far its pixel box reaches, reach (n,)
    float32: R + w/2 (or R), plus a pixel (1/S) with anti-aliasing (docs/drawing.md, "The pixel
    box"). circles: Circles (its position and radius: R); paint: Paint."""
    position, radius, _, _ = circles
    rgba, edge, edge_width, scale, antialias, outlined, _ = paint
    s = f32(scale)
    for i in numba.prange(radius.shape[0]):
        out, r = records[i], radius[i]
        out[X], out[Y], out[MAX_ALPHA], out[RADIUS] = position[i, 0], position[i, 1], snow_max_alpha(position[i, 2]), r
        _prepare_radius(r, s, antialias, out, FILL)
        for c in range(4):
            out[COLOR + c] = rgba[i, c]
        far = r
        if outlined:
            half = f32(0.5) * edge_width[i]
            far = r + half
            _prepare_radius(far, s, antialias, out, OUTER)
            _prepare_radius(r - half, s, antialias, out, INNER)
            for c in range(4):
                out[EDGE + c] = edge[i, c]
        reach[i] = far + ONE / s if antialias else far


@numba.njit(inline="always")
def _blend_run(row: np.ndarray, base: np.uint64, a: int, b: int, alpha: float, c0: float, c1: float,
               c2: float) -> None:
    """One layer of one alpha over pixels [a, b) of an RGBA row: P <- alpha*c + (1-alpha)*P
    (alpha*c once), A <- alpha + (1-alpha)*A (fast_blend: 4 pixels a vector step)."""
    keep = ONE - alpha
    blend_pixels(row, base + np.uint64(4 * a), b - a, (alpha * c0, alpha * c1, alpha * c2, alpha),
                 (keep, keep, keep, keep))


@numba.njit(inline="always")
def _blend_pixel(row: np.ndarray, j: np.uint64, alpha: float, c0: float, c1: float, c2: float) -> None:
    """One layer over one pixel (row[j:j + 4]), in the reference's operation order."""
    keep = ONE - alpha
    row[j] = alpha * c0 + keep * row[j]
    row[j + np.uint64(1)] = alpha * c1 + keep * row[j + np.uint64(1)]
    row[j + np.uint64(2)] = alpha * c2 + keep * row[j + np.uint64(2)]
    row[j + np.uint64(3)] = alpha + keep * row[j + np.uint64(3)]


@numba.njit(inline="always")
def _coverage(rad: tuple[float, float, float, float], d2: float, scale: float, antialias: bool) -> float:
    """A radius's coverage at d2 (rad: its (pos, inner, rq, cap))."""
    if antialias:
        return _cover(rad[RQ], rad[CAP], d2, scale)
    return ONE if d2 <= rad[POS] else ZERO


@numba.njit(inline="always")
def _four(record: np.ndarray, at: int) -> tuple[float, float, float, float]:
    """Four values of a record from ``at`` (a radius, a colour), read once per entry."""
    return record[at], record[at + 1], record[at + 2], record[at + 3]


@numba.njit(inline="always")
def _span(x: float, t: float, dy2: float, cx: np.ndarray, lo: int, hi: int, scale: int) -> tuple[int, int]:
    """The pixels [a, b) of [lo, hi) with d2 <= t (empty for NONE, and where dy2 > t: d2 =
    dy2 + dx*dx rounded is at least dy2, so no pixel of the row is within)."""
    if dy2 > t or lo >= hi:
        return lo, lo
    return row_span(x, t, dy2, cx, lo, hi, scale)


@numba.njit(inline="always")
def _inner_span(x: float, t: float, dy2: float, cx: np.ndarray, a: int, b: int) -> tuple[int, int]:
    """The pixels of [a, b) with d2 <= t, where [a, b) is the run of a larger threshold: the
    same run less a pixel or two at each end (the anti-aliased fringe), so found by walking in
    from the ends. Empty: (a, a)."""
    c = a
    while c < b and squared_distance(x, cx[c], dy2) > t:
        c += 1
    if c == b:
        return a, a
    d = b
    while squared_distance(x, cx[d - 1], dy2) > t:       # stops at c, which is inside
        d -= 1
    return c, d


@numba.njit(inline="always")
def _runs(x: float, rad: tuple[float, float, float, float], dy2: float, cx: np.ndarray, lo: int, hi: int,
          scale: int) -> tuple[int, int, int, int]:
    """A radius's runs of one row within [lo, hi): coverage > 0 on [a, b), == cap on [c, d)."""
    a, b = _span(x, rad[POS], dy2, cx, lo, hi, scale)
    c, d = (a, b) if rad[IN] == rad[POS] else _inner_span(x, rad[IN], dy2, cx, a, b)
    return a, b, c, d


@numba.njit(inline="always")
def _snow(d2: float, radius: float, max_alpha: float, ramp: np.ndarray) -> tuple[float, float, float, float]:
    """The course's snow shading at d2: (alpha, r, g, b) (cpu/shading.py snow_alpha_color)."""
    last = ramp.shape[0] - 1
    d = np.sqrt(d2) / radius
    scaled = d * f32(last)
    entry = min(np.int32(scaled), last)
    weight = scaled - f32(entry)
    nxt = min(entry + 1, last)
    falloff = f32(-1) * f32(SNOW_FALLOFF)
    alpha = max_alpha * f32(np.exp(np.float64((falloff * d) * d)))
    c0 = (ONE - weight) * ramp[entry, 0] + weight * ramp[nxt, 0]
    c1 = (ONE - weight) * ramp[entry, 1] + weight * ramp[nxt, 1]
    c2 = (ONE - weight) * ramp[entry, 2] + weight * ramp[nxt, 2]
    return alpha, c0, c1, c2


@numba.njit
def _snow_row(row: np.ndarray, base: np.uint64, x: float, dy2: float, cx: np.ndarray, lo: int, hi: int,
              rad: tuple[float, float, float, float], scale: int, antialias: bool, radius: float, max_alpha: float,
              ramp: np.ndarray) -> tuple[int, int]:
    """A snow circle's fill over one row's pixels [lo, hi), alpha and colour per pixel; returns
    the pixels it may change."""
    a, b, c, d = _runs(x, rad, dy2, cx, lo, hi, scale)
    s = f32(scale)
    for p in range(a, b):
        d2 = squared_distance(x, cx[p], dy2)
        cov = rad[CAP] if c <= p < d else _coverage(rad, d2, s, antialias)
        alpha, c0, c1, c2 = _snow(d2, radius, max_alpha, ramp)
        alpha = alpha * cov
        if alpha > ZERO:
            _blend_pixel(row, base + np.uint64(4 * p), alpha, c0, c1, c2)
    return a, b


@numba.njit(inline="always")
def _fill_row(row: np.ndarray, base: np.uint64, x: float, dy2: float, cx: np.ndarray, lo: int, hi: int,
              rad: tuple[float, float, float, float], scale: int, antialias: bool,
              color: tuple[float, float, float, float]) -> tuple[int, int]:
    """A flat fill (color: r, g, b, alpha) over one row's pixels [lo, hi): anti-aliased, its
    fringe pixel by pixel from each end of the run inwards, up to the first pixel it covers
    at cap (all between are: coverage falls with d2); then the run it covers at cap, one
    alpha. Returns the pixels it may change."""
    a, b = _span(x, rad[POS], dy2, cx, lo, hi, scale)
    c0, c1, c2, alpha = color
    c, d = a, b
    if antialias:
        s, inner, rq, cap = f32(scale), rad[IN], rad[RQ], rad[CAP]
        while c < d:
            d2 = squared_distance(x, cx[c], dy2)
            if d2 <= inner:                   # covered at cap from here on
                break
            layer = alpha * _cover(rq, cap, d2, s)
            if layer > ZERO:
                _blend_pixel(row, base + np.uint64(4 * c), layer, c0, c1, c2)
            c += 1
        while d > c:
            d2 = squared_distance(x, cx[d - 1], dy2)
            if d2 <= inner:
                break
            layer = alpha * _cover(rq, cap, d2, s)
            if layer > ZERO:
                _blend_pixel(row, base + np.uint64(4 * (d - 1)), layer, c0, c1, c2)
            d -= 1
    inside = alpha * rad[CAP]
    if inside > ZERO:
        _blend_run(row, base, c, d, inside, c0, c1, c2)
    return a, b


@numba.njit
def _ring_pixels(row: np.ndarray, base: np.uint64, a: int, b: int, x: float, dy2: float, cx: np.ndarray,
                 outer: tuple[float, float, float, float], inner: tuple[float, float, float, float], scale: float,
                 antialias: bool, edge: tuple[float, float, float, float]) -> None:
    """An outline (edge: r, g, b, alpha) over pixels [a, b) of a row, its coverage cov(outer) -
    cov(inner) computed pixel by pixel."""
    c0, c1, c2, alpha = edge
    for p in range(a, b):
        d2 = squared_distance(x, cx[p], dy2)
        layer = alpha * (_coverage(outer, d2, scale, antialias) - _coverage(inner, d2, scale, antialias))
        if layer > ZERO:
            _blend_pixel(row, base + np.uint64(4 * p), layer, c0, c1, c2)


@numba.njit
def _ring_row(row: np.ndarray, base: np.uint64, x: float, dy2: float, cx: np.ndarray, lo: int, hi: int,
              outer: tuple[float, float, float, float], inner: tuple[float, float, float, float], scale: int,
              antialias: bool, edge: tuple[float, float, float, float]) -> tuple[int, int]:
    """An outline over one row's pixels [lo, hi); returns the pixels it may change. The outer
    radius's runs (coverage > 0, == cap) and the inner one's cut the row into pieces, each of
    one kind: the outer covered whole and the inner not at all (one alpha, edge alpha * outer
    cap), both covered whole with equal caps (nothing: the ring's coverage is 0), or computed
    pixel by pixel."""
    a, b, oa, ob = _runs(x, outer, dy2, cx, lo, hi, scale)
    if a >= b:
        return a, b
    ia, ib, ca, cb = _runs(x, inner, dy2, cx, a, b, scale)
    same_caps = inner[CAP] == outer[CAP]
    whole = edge[3] * outer[CAP]
    s = f32(scale)
    p = a
    while p < b:                 # pieces between consecutive ends of the runs
        e = b
        for cut in (oa, ob, ia, ib, ca, cb):
            if p < cut < e:
                e = cut
        in_outer, in_inner = oa <= p < ob, ia <= p < ib
        if in_outer and not in_inner:
            if whole > ZERO:
                _blend_run(row, base, p, e, whole, edge[0], edge[1], edge[2])
        elif not (in_outer and ca <= p < cb and same_caps):
            _ring_pixels(row, base, p, e, x, dy2, cx, outer, inner, s, antialias, edge)
        p = e
    return a, b


@numba.njit
def _paint_tile(flat: np.ndarray, tile: int, frame: Fields, lists: Fields, paint: Fields, shading: Fields,
                width: int, height: int, outlined: bool, snow: bool) -> None:
    """Tile ``tile``: if the frame clears, its painted pixels set back to the background; then
    each listed circle's fill and outline, row by row, each pixel's layers in index order; the
    pixels they may change added to what is painted (as fast_kernels._draw_tile). ``outlined``
    and ``snow``: the paint's. Compiled as a function of its own, not inlined into paint_tiles,
    as are the outline's and snow's rows: numba's inlining of the whole tree took minutes to
    compile (287 s against 29 s, first call, 2 loaded cores)."""
    painted = frame[3]
    _, _, _, starts, _, boxes, data, _ = lists
    ramp, cx, cy, _ = shading
    _, _, _, scale, antialias, _, _ = paint
    tx0, tx1, ty0, ty1 = open_tile(flat, tile, frame, lists, width, height)
    for e in range(starts[tile], starts[tile + 1]):
        record = data[e]
        x, y_c, max_alpha, radius = _four(record, X)
        fill, color = _four(record, FILL), _four(record, COLOR)
        if outlined:
            outer, inner, ink = _four(record, OUTER), _four(record, INNER), _four(record, EDGE)
        else:
            outer = inner = fill
            ink = color
        lo, hi = max(tx0, boxes[e, 0]), min(tx1, boxes[e, 1])
        for y in range(max(ty0, boxes[e, 2]), min(ty1, boxes[e, 3])):
            dy = y_c - cy[y]
            dy2 = dy * dy
            base = np.uint64(y) * np.uint64(4 * width)
            if snow:
                a, b = _snow_row(flat, base, x, dy2, cx, lo, hi, fill, scale, antialias, radius, max_alpha, ramp)
            else:
                a, b = _fill_row(flat, base, x, dy2, cx, lo, hi, fill, scale, antialias, color)
            if outlined:
                ra, rb = _ring_row(flat, base, x, dy2, cx, lo, hi, outer, inner, scale, antialias, ink)
                if ra < rb:
                    a, b = (ra, rb) if a >= b else (min(a, ra), max(b, rb))
            add_painted(painted[tile, y - ty0], a, b)


@numba.njit
def _fill_tile(flat: np.ndarray, tile: int, frame: Fields, lists: Fields, shading: Fields, width: int, height: int,
               scale: int, following: bool) -> None:
    """_paint_tile for a paint without anti-aliasing, outlines or snow (most drawings): each
    listed circle's fill a run of one alpha a row, the pixels with d2 <= pos (= q*q); with
    ``following``, a circle of SHORT_ROW+1..SCAN_ROW pixel rows finds each row's run from the
    row before's (fast_kernels.next_span, as render_tiles_following does). A loop of its own:
    in _paint_tile's, with every option's branches, the same rows cost more (docs/perf-notes.md)."""
    painted = frame[3]
    _, _, _, starts, _, boxes, data, _ = lists
    _, cx, cy, _ = shading
    tx0, tx1, ty0, ty1 = open_tile(flat, tile, frame, lists, width, height)
    for e in range(starts[tile], starts[tile + 1]):
        record = data[e]
        x, y_c, pos = record[X], record[Y], record[FILL + POS]
        c0, c1, c2, alpha = _four(record, COLOR)
        inside = alpha * record[FILL + CAP]                   # as _fill_row: cap is 1
        lo, hi = max(tx0, boxes[e, 0]), min(tx1, boxes[e, 1])
        follow = following and SHORT_ROW < hi - lo <= SCAN_ROW
        m = nearest_column(x, cx, lo, hi, scale) if follow else lo
        a, b = lo, lo
        for y in range(max(ty0, boxes[e, 2]), min(ty1, boxes[e, 3])):
            dy = y_c - cy[y]
            dy2 = dy * dy
            a, b = next_span(x, pos, dy2, cx, lo, hi, m, a, b) if follow else _span(x, pos, dy2, cx, lo, hi, scale)
            if inside > ZERO:
                _blend_run(flat, np.uint64(y) * np.uint64(4 * width), a, b, inside, c0, c1, c2)
            add_painted(painted[tile, y - ty0], a, b)


@cached_njit(parallel=True)
def paint_tiles(frame: Fields, lists: Fields, paint: Fields, shading: Fields, tiles: np.ndarray, slots: int,
                following: bool) -> None:
    """Draw a drawing's given tiles (_paint_tile; _fill_tile for a paint without anti-aliasing,
    outlines or snow) in ``slots`` parallel iterations, as fast_kernels.render_tiles does the
    course's: frame: Frame
    (the image holds premultiplied P and A); lists: Tiles; paint: Paint; shading: Shading (snow's
    ramp and the pixel centres, S pixels a unit); tiles: (k,) int64 row-major tile numbers (the
    structures: cpu/fast_types.py); following: a batch of mostly SHORT_ROW+1..SCAN_ROW pixel
    circles (fast.mostly_mid_sized), whose rows _fill_tile finds from the row before's (the
    same bits either way)."""
    _, _, _, scale, antialias, outlined, snow = paint
    flat, width, height = flat_frame(frame)
    plain = not (antialias or outlined or snow)
    for s in numba.prange(slots):
        for k in range(s, tiles.shape[0], slots):
            if plain:
                _fill_tile(flat, tiles[k], frame, lists, shading, width, height, scale, following)
            else:
                _paint_tile(flat, tiles[k], frame, lists, paint, shading, width, height, outlined, snow)


@cached_njit(parallel=True)
def unpremultiply(image: np.ndarray, out: np.ndarray) -> None:
    """out = image in straight colour: rgb = P / A where A > 0, else 0; alpha A (image, out:
    (H, W, 4) float32; cpu/reference_drawing.py finish)."""
    for y in numba.prange(image.shape[0]):
        for x in range(image.shape[1]):
            alpha = image[y, x, 3]
            for c in range(3):
                out[y, x, c] = image[y, x, c] / alpha if alpha > ZERO else ZERO
            out[y, x, 3] = alpha
