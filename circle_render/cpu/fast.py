"""``cpu-fast``: the reference's pictures, bit for bit, from a tiled multi-threaded renderer
compiled with numba (the GPU renderers' design on the CPU).

A frame (render_image), a batch of consecutive circles at a time: each tile's circles of the
batch listed in index order, with their pixel boxes as the reference computes them (count, then
list) -> tiles drawn in parallel, the first batch starting from the background where the frame
was cleared, each pixel's circles blended in index order, in chunks of tiles between which
Python sees Ctrl-C. The kernels are in fast_bins.py
(lists) and fast_kernels.py (drawing), and take the named structures of fast_types.py; their
buffers live in TileLists, reused frame to frame. Threads: numba's (all cores unless
NUMBA_NUM_THREADS or numba.set_num_threads says otherwise), started on first use
(fast_numba.py).
"""
from __future__ import annotations

import functools
import threading

import numpy as np

from circle_render.constants import SNOW_RAMP
from circle_render.cpu.fast_types import (
    Circles,
    Counts,
    Entries,
    Fields,
    Frame,
    Paint,
    Shading,
    TileGrid,
    Tiles,
    fields,
)
from circle_render.cpu.shading import clear_rows, pixel_centres
from circle_render.scenes.scene import SNOW, Scene

TILE_W, TILE_H = 1024, 16    # tile size in pixels (powers of two): wide tiles compute each circle row's span once
BATCH_CIRCLES = 1 << 16      # circles listed and drawn at a time: the lists' memory follows a batch, not the scene
BATCH_ENTRIES = 1 << 19      # (circle, tile) pairs a batch lists at most (52 bytes each: Entries), else it is halved
MAX_COUNTERS = 1 << 20       # parts x tiles of per-part tile counts at most (the count pass's memory)
PARALLEL = threading.Lock()  # one parallel numba call at a time (the workqueue layer's rule)
CHUNK_PIXELS = 1 << 26       # pixels drawn per parallel call: Ctrl-C waits for one call at most
DYNAMIC_PIXELS = 1 << 22     # a call's pixels from which threads take its tiles one at a time (draw)
SERIAL_CIRCLES = 1 << 12     # circles below which they are binned on the calling thread


UNREAD = np.zeros((0, 4), np.float32)   # the background argument of a frame that is not cleared: never read
centres = functools.lru_cache(maxsize=8)(pixel_centres)    # (size,) float32, read-only by convention


@functools.lru_cache(maxsize=8)
def shading(width: int, height: int, snow: bool, scale: int | None = None) -> Fields:
    """The Shading a frame of this size takes (its fields: see fast_types.py); ``scale``: a
    drawing's S, whose pixel centres are (1/S) * (i + 0.5) on both axes (None: the course's,
    1/width and 1/height)."""
    if scale is None:
        return fields(Shading(SNOW_RAMP, centres(width), centres(height), snow))
    return fields(Shading(SNOW_RAMP, centres(scale)[:width], centres(scale)[:height], snow))


def parts(threads: int, tiles: int) -> int:
    """Ranges of circles the parallel passes cut the scene into: 4 a thread, fewer where the
    per-part counters (parts x tiles) would pass MAX_COUNTERS."""
    return max(1, min(4 * threads, MAX_COUNTERS // tiles))


class TileLists:
    """The tile lists' buffers, kept from frame to frame (they grow, never shrink): a new
    allocation's page faults would cost a scene of millions of circles more than binning it.
    They hold one batch of circles at a time (render_image), so their size follows
    BATCH_CIRCLES and BATCH_ENTRIES, not the scene's."""

    def __init__(self) -> None:
        self.shown = np.empty(0, np.int32)         # (batch,) the batch's circles on the image
        self.entries = Entries(np.empty(0, np.int32), np.empty((0, 4), np.int32), np.empty((0, 8), np.float32))
        self._entries = fields(self.entries)

    def tiles(self, circles: Circles, grid: TileGrid, threads: int) -> tuple[Tiles, int]:
        """The tile lists (fast_bins) of the first k of ``circles`` (consecutive circles of a
        scene, k >= 1 unless there are none): all of them, or as many as halving them leaves
        under BATCH_ENTRIES (circle, tile) pairs. Returns (their Tiles, k)."""
        from circle_render.cpu.fast_bins import count_tiles, count_tiles_serial, list_tiles, list_tiles_serial
        k = circles.radius.shape[0]
        if self.shown.shape[0] < k:
            self.shown = np.empty(k, np.int32)
        serial = k < SERIAL_CIRCLES
        while True:
            part = fields(Circles(*(a[:k] if a.shape[0] else a for a in circles)))
            with PARALLEL:
                counted = (count_tiles_serial(part, fields(grid), self.shown) if serial else
                           count_tiles(part, fields(grid), parts(threads, grid.tiles_x * grid.tiles_y), self.shown))
            counts = Counts(*counted)
            if counts.starts[-1] <= BATCH_ENTRIES or k <= 1:
                break
            k //= 2
        entries, record = int(counts.starts[-1]), circles.records.shape[1]
        if self.entries.ids.shape[0] < entries or self.entries.data.shape[1] != record:
            grown = entries + entries // 4
            self.entries = Entries(np.empty(grown, np.int32), np.empty((grown, 4), np.int32),
                                   np.empty((grown, record), np.float32))
            self._entries = fields(self.entries)
        with PARALLEL:
            (list_tiles_serial if serial else list_tiles)(part, fields(grid), counted, self.shown, self._entries)
        tiles = Tiles(grid.tile_w, grid.tile_h, grid.tiles_x, counts.starts, counts.costs, self.entries.boxes,
                      self.entries.data, self.entries.ids)
        return tiles, k


class Painted:
    """What of the image may differ from the background (the clear colours): per tile row, one
    span of pixels, so that a cleared frame rewrites only what the last frames painted."""

    def __init__(self) -> None:
        self.grid: tuple[int, int, int, int] | None = None     # (tile_w, tile_h, tiles_x, tiles)
        self.spans = np.zeros((0, 1, 2), np.int32)     # (tiles, tile_h, 2): pixels [lo, hi) of each tile row
        self.all_background = False                    # the whole image is background

    def for_grid(self, grid: tuple[int, int, int, int], width: int, height: int) -> np.ndarray:
        """The spans for this tile grid; a new grid starts from what is known: nothing painted,
        or everything."""
        if grid != self.grid:
            tile_w, tile_h, tiles_x, tiles = grid
            self.grid, self.spans = grid, np.zeros((tiles, tile_h, 2), np.int32)
            if not self.all_background:
                for t in range(tiles):
                    x0, y0 = (t % tiles_x) * tile_w, (t // tiles_x) * tile_h
                    self.spans[t, :max(min(tile_h, height - y0), 0)] = x0, min(x0 + tile_w, width)
        self.all_background = False
        return self.spans

    def cleared_all(self) -> None:
        self.all_background = True
        self.spans[:] = 0


def chunks(costs: np.ndarray, threads: int) -> list[np.ndarray]:
    """The tiles with work (costs: each tile's pixels to draw) in row-major order, cut into
    consecutive chunks of about CHUNK_PIXELS, at least 4 tiles per thread where there are that
    many. Every tile with work is in exactly one chunk."""
    busy = np.flatnonzero(costs)
    total = np.cumsum(costs[busy])
    cuts, lo = [], 0
    while lo < busy.size:
        hi = int(np.searchsorted(total, (total[lo - 1] if lo else 0) + CHUNK_PIXELS, side="right"))
        hi = min(max(hi, lo + 4 * threads), busy.size)
        cuts.append(busy[lo:hi])
        lo = hi
    return cuts


def mostly_mid_sized(radius: np.ndarray, scale: int) -> bool:
    """Whether most of these circles are SHORT_ROW+1..SCAN_ROW pixels across (radius in units,
    ``scale`` pixels a unit): the batch render_tiles_following draws (either kernel draws any
    batch, to the same bits; this one is 25% faster on 1M circles of 12 px, docs/perf-notes.md),
    and whose plain fills fast_drawing._fill_tile follows from row to row (a drawing's S pixels
    a unit; 20% faster on 1M circles of per-circle alpha, one thread)."""
    from circle_render.cpu.fast_kernels import SCAN_ROW, SHORT_ROW
    across = 2 * scale * radius
    return 2 * int(np.count_nonzero((across > SHORT_ROW) & (across <= SCAN_ROW))) > radius.shape[0]


def draw(image: np.ndarray, tiles: Tiles, background: np.ndarray | None, painted: np.ndarray, snow: bool,
         threads: int, paint: Paint | None = None, following: bool = False) -> None:
    """fast_kernels.render_tiles (``following``: render_tiles_following; with ``paint``, a
    drawing: fast_drawing.paint_tiles) over every tile with circles, or painted where the frame
    is cleared (``background`` not None), in chunks on ``threads`` threads."""
    from circle_render.cpu.fast_drawing import paint_tiles
    from circle_render.cpu.fast_kernels import render_tiles, render_tiles_following
    from circle_render.cpu.fast_numba import tile_at_a_time
    height, width, _ = image.shape
    rows = image.reshape(height, 4 * width)
    costs = tiles.costs.copy()                     # each tile's work: box pixels, and pixels to clear
    if background is not None:
        costs += np.clip(painted[:, :, 1] - painted[:, :, 0], 0, None).sum(axis=1)
    frame = fields(Frame(rows, background is not None, UNREAD if background is None else background, painted))
    lists = fields(tiles)
    for part in chunks(costs, threads):
        n, dynamic = min(threads, part.size), int(costs[part].sum()) >= DYNAMIC_PIXELS
        with PARALLEL, tile_at_a_time(n, dynamic):
            slots = part.size if dynamic else n         # a tile a slot, taken as threads come free
            if paint is None:
                kernel = render_tiles_following if following else render_tiles
                kernel(frame, lists, shading(width, height, snow), part, slots)
            else:
                paint_tiles(frame, lists, fields(paint), shading(width, height, snow, paint.scale), part, slots,
                            following)


def render_image(scene: Scene, image: np.ndarray, threads: int | None = None, background: np.ndarray | None = None,
                 painted: Painted | None = None, lists: TileLists | None = None,
                 prepared: PreparedPaint | None = None) -> np.ndarray:
    """Blend all circles of ``scene`` into ``image`` ((H, W, 4) float32, C-contiguous, in place),
    exactly as the reference (cpu/reference.py render_planes) does; a scene with a drawing as
    cpu/reference_drawing.py does (premultiplied: the image holds P and A; ``prepared``: its
    buffers, kept frame to frame). With ``background`` ((H, 4) float32, each row's clear colour),
    the image is cleared first, tile by tile as it is drawn; ``painted`` says what of the image
    may differ from the background, and is kept up to date.

    The circles are drawn a batch of consecutive circles at a time, every tile of one batch
    before the next: each pixel still blends its circles in index order, the same float
    operations as one pass, while the lists hold one batch (their memory is the batch's)."""
    import numba

    from circle_render.cpu.fast_numba import start_threads
    start_threads()
    height, width, _ = image.shape
    threads = threads or numba.get_num_threads()
    lists, painted = lists or TileLists(), painted or Painted()
    prepared = prepared or PreparedPaint()
    paint = None if scene.drawing is None else prepared.paint(scene, width, height)
    sx, sy = (width, height) if paint is None else (paint.scale, paint.scale)
    grid = TileGrid(width, height, TILE_W, TILE_H, -(-width // TILE_W), -(-height // TILE_H), sx, sy)
    spans = painted.for_grid((TILE_W, TILE_H, grid.tiles_x, grid.tiles_x * grid.tiles_y), width, height)
    lo, n = 0, scene.n
    while True:                  # at least one batch: with no circles, it clears what was painted
        hi = min(n, lo + BATCH_CIRCLES)
        circles = (Circles(scene.position[lo:hi], scene.radius[lo:hi], np.ascontiguousarray(scene.color[lo:hi]),
                           COURSE_RECORDS) if paint is None else prepared.batch(scene, paint, lo, hi))
        tiles, listed = lists.tiles(circles, grid, threads)
        following = scene.shading != SNOW and mostly_mid_sized(scene.radius[lo:lo + listed], sx)
        draw(image, tiles, background if lo == 0 else None, spans, scene.shading == SNOW, threads, paint, following)
        lo += listed
        if lo >= n:
            return image


class PreparedPaint:
    """A drawing's per-circle buffers (fast_drawing.prepare_paint) for a batch of circles, kept
    from frame to frame: how far each circle's box reaches, and the record each of its list
    entries holds."""

    def __init__(self) -> None:
        self.reach = np.empty(0, np.float32)
        self.records = np.empty((0, 0), np.float32)

    def paint(self, scene: Scene, width: int, height: int) -> Paint:
        """The scene's drawing as the kernels take it."""
        drawing = scene.drawing
        assert drawing is not None
        return Paint(drawing.rgba, UNREAD if drawing.edge_rgba is None else drawing.edge_rgba,
                     NO_WIDTHS if drawing.edge_width is None else drawing.edge_width, max(width, height),
                     drawing.antialias, drawing.outlined, scene.shading == SNOW)

    def batch(self, scene: Scene, paint: Paint, lo: int, hi: int) -> Circles:
        """Circles lo..hi-1 as the lists take them, their records made from the scene's current
        circles (docs/drawing.md: once per circle a frame)."""
        from circle_render.cpu.fast_drawing import OUTLINED_RECORD, RECORD, prepare_paint
        k, record = hi - lo, OUTLINED_RECORD if paint.outlined else RECORD
        if self.records.shape[0] < k or self.records.shape[1] != record:
            self.reach, self.records = np.empty(k, np.float32), np.zeros((k, record), np.float32)
        reach, records = self.reach[:k], self.records[:k]
        per_circle = [a[lo:hi] if a.shape[0] else a for a in (paint.rgba, paint.edge, paint.edge_width)]
        circles = Circles(scene.position[lo:hi], scene.radius[lo:hi], NO_COLORS, records)
        with PARALLEL:
            prepare_paint(fields(circles), fields(paint._replace(rgba=per_circle[0], edge=per_circle[1],
                                                                 edge_width=per_circle[2])), reach, records)
        return circles._replace(radius=reach)


NO_COLORS = np.zeros((0, 3), np.float32)        # the colours of a drawing's Circles: its records hold them
NO_WIDTHS = np.zeros(0, np.float32)             # a Paint's edge widths without outlines
COURSE_RECORDS = np.zeros((0, 8), np.float32)   # a course scene's Circles.records: made by the lists


class CpuFastRenderer:
    """cpu-fast behind the renderer interface (circle_render/interface.py). clear() only notes
    that the picture is to start from the background: render() writes it tile by tile as it
    blends (one pass over the image, not two), and only where the image is not background.
    A scene with a drawing (``scene.drawing``, docs/drawing.md) takes the drawing path
    (cpu/fast_drawing.py): the image holds premultiplied colour and alpha, turned into straight
    colour when read, where the background is not opaque. With ``copy_at_load`` False (the
    Canvas, which never changes an array it handed over) the scene's arrays are kept as they
    are, not copied, and update_circles keeps the new ones."""

    name = "cpu-fast"
    draws_drawings = True
    copy_at_load = True

    scene: Scene
    image: np.ndarray                    # (H, W, 4) float32, row 0 at the bottom

    def __init__(self, threads: int | None = None):
        self.threads = threads

    def load(self, scene: Scene, width: int, height: int) -> None:
        from circle_render.cpu.fast_numba import start_threads
        start_threads()                                                  # numba's, on first use
        self.scene, self.width, self.height = scene.copy() if self.copy_at_load else scene, width, height
        self.image = np.empty((height, width, 4), dtype=np.float32)
        drawing = scene.drawing
        if drawing is None:
            self._background = clear_rows(height, scene.shading)        # (H, 4) each row's clear colour
        else:                                                            # ... premultiplied: P = A * C, A
            from circle_render.cpu.reference_drawing import clear_planes
            self._background = np.ascontiguousarray(clear_planes(drawing, scene.shading, height).T)
        self._straight = None if drawing is None or drawing.opaque else np.empty_like(self.image)
        self._painted = Painted()                                         # what may differ from that
        self._lists = TileLists()                                        # binning buffers
        self._prepared = PreparedPaint()                                 # a drawing's per-circle buffers
        self._clear_pending = False
        self._fill_background()                                          # a new picture is blank

    def circle_fields(self) -> tuple[str, ...]:
        """What update_circles takes for the scene loaded: every field for a course scene; only
        position for a scene with a drawing (its drawing path may derive values at load)."""
        return ("position", "radius", "color") if self.scene.drawing is None else ("position",)

    def update_circles(self, position: np.ndarray | None = None, radius: np.ndarray | None = None,
                       color: np.ndarray | None = None) -> None:
        """Replace circles in place, n unchanged: position (n, 3), radius (n,), color (n, 3)
        (copied as float32; kept as they are, float32, when not copy_at_load). Nothing is
        planned at load: every frame lists the tiles' circles afresh, so the next render draws
        them."""
        for name, new in (("position", position), ("radius", radius), ("color", color)):
            if new is None:
                continue
            target = getattr(self.scene, name)
            if new.shape != target.shape:
                raise ValueError(f"update: {name} must have shape {target.shape} (n as loaded), got {new.shape}")
            if self.copy_at_load:
                np.copyto(target, new, casting="same_kind")
            else:
                setattr(self.scene, name, new)

    def clear(self) -> None:
        self._clear_pending = True

    def advance(self) -> None:
        from circle_render.cpu.fast_animation import advance
        advance(self.scene, PARALLEL)

    def render(self) -> None:
        render_image(self.scene, self.image, self.threads, self._background if self._clear_pending else None,
                     self._painted, self._lists, self._prepared)
        self._clear_pending = False

    def synchronize(self) -> None:
        pass

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32, row 0 at the bottom (a drawing: straight colour and alpha). After
        clear() with no render() since (or one that was interrupted), the background."""
        return self.image_view().copy()

    def image_view(self) -> np.ndarray:
        """get_image() without the copy: the renderer's own image, valid until its next call
        (writers read it in strips: no second full-size float image; io/pixels.py)."""
        if self._clear_pending:
            self._fill_background()
        if self._straight is None:
            return self.image
        from circle_render.cpu.fast_drawing import unpremultiply
        with PARALLEL:
            unpremultiply(self.image, self._straight)
        return self._straight

    def _fill_background(self) -> None:
        from circle_render.cpu.fast_kernels import fill_rows
        with PARALLEL:
            fill_rows(self.image.reshape(self.height, 4 * self.width), self._background)
        self._painted.cleared_all()
        self._clear_pending = False


def reference_image(scene: Scene, width: int, height: int, steps: int = 1) -> np.ndarray:
    """The reference renderer's picture after ``steps`` animation steps, (H, W, 4) float32,
    drawn by cpu-fast (bit-identical to cpu/reference.py reference_image)."""
    r = CpuFastRenderer()
    r.load(scene, width, height)
    for _ in range(steps):
        r.advance()
    r.clear()
    r.render()
    return r.get_image()
