"""``cpu-fast``: the reference's pictures, bit for bit, from a tiled multi-threaded renderer
compiled with numba (the GPU renderers' design on the CPU).

A frame: circle boxes (as the reference computes them) -> circles binned to square tiles in
index order -> tiles blended in parallel, each pixel's circles in index order, in chunks of
tiles between which Python sees Ctrl-C. Threads: numba's (all cores unless NUMBA_NUM_THREADS
or numba.set_num_threads says otherwise).
"""
from __future__ import annotations

import threading

import numpy as np

from circle_render.constants import SNOW_RAMP
from circle_render.cpu.animation import advance
from circle_render.cpu.shading import clear_rows, pixel_centres
from circle_render.scenes.scene import SNOW, Scene

f32 = np.float32
TILE_W, TILE_H = 1024, 16    # tile size in pixels: wide tiles compute each circle row's span once
MAX_BIN_ENTRIES = 1 << 24    # (circle, tile) pairs at most (48 bytes each), before the tiles grow
PARALLEL = threading.Lock()  # one parallel numba call at a time (the workqueue layer's rule)
CHUNK_PIXELS = 1 << 26       # circle box pixels per parallel call: Ctrl-C waits for one at most


def bin_tiles(boxes, data, width: int, height: int):
    """(tile_w, tile_h, tiles_x, starts, costs, entry_boxes, entry_data): bin_circles with TILE_W x TILE_H tiles, both
    sides doubled while the (circle, tile) pairs would be more than MAX_BIN_ENTRIES."""
    from circle_render.cpu.fast_kernels import bin_circles
    tw, th = TILE_W, TILE_H
    while True:
        tiles_x = -(-width // tw)
        limit = MAX_BIN_ENTRIES if tw < width or th < height else 2 ** 62    # one tile: any count
        starts, costs, ids, entry_boxes, entry_data = bin_circles(boxes, data, tw, th, tiles_x, -(-height // th), limit)
        if ids.size == starts[-1]:
            return tw, th, tiles_x, starts, costs, entry_boxes, entry_data
        tw, th = 2 * tw, 2 * th


def chunks(costs: np.ndarray, threads: int) -> list[np.ndarray]:
    """The tiles with circles (costs: each tile's circle box pixels) in row-major order, cut into
    consecutive chunks of about CHUNK_PIXELS box pixels, at least 4 tiles per thread where there
    are that many. Every tile with circles is in exactly one chunk."""
    busy = np.flatnonzero(costs)
    total = np.cumsum(costs[busy])
    cuts, lo = [], 0
    while lo < busy.size:
        hi = int(np.searchsorted(total, (total[lo - 1] if lo else 0) + CHUNK_PIXELS, side="right"))
        hi = min(max(hi, lo + 4 * threads), busy.size)
        cuts.append(busy[lo:hi])
        lo = hi
    return cuts


def render_image(scene: Scene, image: np.ndarray, threads: int | None = None) -> np.ndarray:
    """Blend all circles of ``scene`` into ``image`` ((H, W, 4) float32, C-contiguous, in place),
    exactly as the reference (cpu/reference.py render_planes) does."""
    import numba

    from circle_render.cpu.fast_kernels import prepare_circles, render_tiles
    height, width, _ = image.shape
    rows = image.reshape(height, 4 * width)
    threads = threads or numba.get_num_threads()
    with PARALLEL:
        boxes, data = prepare_circles(scene.position, scene.radius, scene.color, width, height)
    tile_w, tile_h, tiles_x, starts, costs, boxes, data = bin_tiles(boxes, data, width, height)
    cx, cy = pixel_centres(width), pixel_centres(height)
    for part in chunks(costs, threads):
        with PARALLEL:
            render_tiles(rows, part, min(threads, part.size), tile_w, tile_h, tiles_x, starts, boxes, data,
                         SNOW_RAMP, cx, cy, scene.shading == SNOW)
    return image


class CpuFastRenderer:
    """cpu-fast behind the renderer interface (circle_render/interface.py)."""

    name = "cpu-fast"

    def __init__(self, threads: int | None = None):
        self.threads = threads
        self.scene = self.image = None

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.scene, self.width, self.height = scene.copy(), width, height
        self.image = np.empty((height, width, 4), dtype=np.float32)
        self._clear = clear_rows(height, scene.shading)                 # (H, 4)

    def clear(self) -> None:
        from circle_render.cpu.fast_kernels import fill_rows
        with PARALLEL:
            fill_rows(self.image.reshape(self.height, 4 * self.width), self._clear)

    def advance(self) -> None:
        advance(self.scene)

    def render(self) -> None:
        render_image(self.scene, self.image, self.threads)

    def synchronize(self) -> None:
        pass

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32, row 0 at the bottom."""
        return self.image.copy()


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
