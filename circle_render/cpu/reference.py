"""The NumPy reference renderer: the ground truth, blending circles in exact serial order.

Two code paths give bit-identical results (tests check this):
- ``_render_boxes``: one circle at a time over its pixel box, for circles big enough that NumPy
  calls are long (the course's reference loop, vectorised within a circle);
- ``_render_pairs``: many small circles at once. It lists every (circle, pixel) pair, ranks
  the pairs that land on the same pixel by circle index, and blends rank 0 everywhere, then
  rank 1, ...: each pixel still sees its circles in serial order, but one NumPy call handles
  thousands of circles.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from circle_render.constants import FLAT_ALPHA
from circle_render.cpu.animation import advance
from circle_render.cpu.reference_boxes import (
    PAIR_BUDGET,
    Runs,
    box_views,
    by_rank,
    in_bands,
    pairs,
    split_runs,
)
from circle_render.cpu.shading import (
    Bounds,
    blend_planes,
    circle_bounds,
    clear_rows,
    covered,
    pixel_centres,
    snow_alpha_color,
)
from circle_render.progress import Progress
from circle_render.scenes.scene import SNOW, Scene

f32 = np.float32



def _shade(planes: Any, d2: np.ndarray, where: np.ndarray | None, scene: Scene, i: int | np.ndarray) -> None:
    """Blend circle(s) i into the channel planes where ``where`` holds (i: int or index array)."""
    if scene.shading == SNOW:
        alpha, colors = snow_alpha_color(d2, scene.radius[i], scene.position[i, 2])
    else:
        alpha, colors = FLAT_ALPHA, scene.color[i].T
    blend_planes(planes, alpha, colors, where)


def _render_boxes(planes: np.ndarray, scene: Scene, ids: np.ndarray, bounds: Bounds, cx: np.ndarray, cy: np.ndarray,
                  progress: Progress | None, done: int, stop: threading.Event | None = None) -> None:
    """Blend circles ``ids`` one by one over their pixel boxes (bounds relative to ``planes``).

    Each box is blended whole into a temporary and copied back where covered: plain
    NumPy loops are several times faster than masked (``where=``) ones.
    """
    rad = scene.radius
    flat = scene.shading != SNOW
    # flat shading as one multiply-add over the 4 planes: rgb*(1-a) + a*colour, alpha + a
    keep = np.array([f32(1) - FLAT_ALPHA] * 3 + [f32(1)], dtype=np.float32)[:, None, None]
    add = np.empty((scene.n, 4, 1, 1), dtype=np.float32)
    add[:, :3, 0, 0] = FLAT_ALPHA * scene.color
    add[:, 3] = FLAT_ALPHA
    for i, d2, box in box_views(planes, scene.position, ids, bounds, cx, cy, progress, done, stop):
        if flat:
            new = box * keep
            new += add[i]
        else:
            new = box.copy()
            _shade(new, d2, None, scene, i)
        np.copyto(box, new, where=covered(d2, rad[i]))





def _render_pairs(planes: np.ndarray, scene: Scene, ids: np.ndarray, bounds: Bounds, cx: np.ndarray,
                  cy: np.ndarray) -> None:
    """Blend circles ``ids`` (all small) in one batch, ranking pairs per pixel."""
    width = planes.shape[2]
    cid, px, py = pairs(ids, bounds)
    dx = scene.position[cid, 0] - cx[px]
    dy = scene.position[cid, 1] - cy[py]
    d2 = dx * dx + dy * dy
    keep = covered(d2, scene.radius[cid])
    cid, d2 = cid[keep], d2[keep]
    pix = py[keep] * width + px[keep]
    flat_planes = planes.reshape(4, -1)
    for sel in by_rank(pix):                             # at most one pair per pixel
        p = pix[sel]
        values = flat_planes[:, p]
        _shade(values, d2[sel], None, scene, cid[sel])
        flat_planes[:, p] = values


def _render_band(planes: np.ndarray, scene: Scene, runs: list[np.ndarray], small: np.ndarray, area: np.ndarray,
                 bounds: Bounds, cx: np.ndarray, cy: np.ndarray, progress: Progress | None,
                 stop: threading.Event | None = None) -> None:
    """Render every circle into one band of rows (bounds already relative to the band);
    return early once ``stop`` (a threading.Event) is set."""
    for run in runs:
        if stop is not None and stop.is_set():
            return
        if small[run[0]]:
            budget = np.cumsum(area[run])
            cuts = np.searchsorted(budget, np.arange(PAIR_BUDGET, budget[-1] + PAIR_BUDGET, PAIR_BUDGET))
            for batch in np.split(run, np.unique(np.clip(cuts, 1, run.size))):
                if stop is not None and stop.is_set():
                    return
                if batch.size:
                    _render_pairs(planes, scene, batch, bounds, cx, cy)
                    if progress is not None:
                        progress.update(int(batch[-1]) + 1)
        else:
            _render_boxes(planes, scene, run, bounds, cx, cy, progress, int(run[0]), stop)





def _plan(scene: Scene, width: int, height: int) -> Runs:
    """Pixel boxes, box areas, which circles are small, and the runs of consecutive small or big
    circles. Runs are rendered in order, each by its path, so serial order holds.

    Each run costs a fixed overhead, so short runs are merged away: where sizes straddle
    SMALL_BOX_AREA (rand1M at 517 pixels) the kinds would alternate every few circles. Short
    runs of big circles (boxes up to PAIR_MAX_AREA) join the pairs path first; the short small
    runs left between long big runs then join the box path."""
    return split_runs(circle_bounds(scene.position, scene.radius, width, height))





def render_planes(scene: Scene, planes: np.ndarray, progress: bool = False,
                  threads: int | None = None) -> np.ndarray:
    """Blend all circles into ``planes`` ((4, H, W) float32 channel planes, modified in place).

    The image is cut into bands of rows, one per thread: a pixel's circles are still blended
    in serial order, and NumPy lets the threads run while it computes.
    """
    _, height, width = planes.shape
    (x0, x1, y0, y1), area, small, runs = _plan(scene, width, height)
    cx, cy = pixel_centres(width), pixel_centres(height)
    bar = Progress(f"rendering {scene.name} ({width}x{height}, cpu)", scene.n, progress)
    in_bands(lambda band, bounds, cy_band, bar, stop: _render_band(band, scene, runs, small, area, bounds, cx,
                                                                   cy_band, bar, stop),
             planes, (x0, x1, y0, y1), cy, bar, threads)
    bar.close()
    return planes





class CpuRenderer:
    """The reference renderer behind the common renderer interface (circle_render/interface.py).
    A scene with a drawing (``scene.drawing``) takes the drawing path (cpu/reference_drawing.py)."""

    name = "cpu"
    draws_drawings = True

    def __init__(self, progress: bool = False, threads: int | None = None):
        self.progress, self.threads = progress, threads
        self.scene: Scene | None = None
        self.planes: np.ndarray | None = None

    def load(self, scene: Scene, width: int, height: int) -> None:
        self.scene, self.width, self.height = scene.copy(), width, height
        self.planes = np.empty((4, height, width), dtype=np.float32)
        if scene.drawing is not None:
            from circle_render.cpu.reference_drawing import clear_planes
            self._clear = clear_planes(scene.drawing, scene.shading, height)    # (4, H), premultiplied
        else:
            self._clear = np.ascontiguousarray(clear_rows(height, scene.shading).T)  # (4, H)

    def clear(self) -> None:
        assert self.planes is not None, "load() first"
        self.planes[...] = self._clear[:, :, None]

    def advance(self) -> None:
        assert self.scene is not None, "load() first"
        advance(self.scene)

    def render(self) -> None:
        scene, planes = self.scene, self.planes
        assert scene is not None and planes is not None, "load() first"
        if scene.drawing is not None:
            from circle_render.cpu.reference_drawing import render_drawing
            render_drawing(scene, planes, self.width, self.height, 0, self.progress, self.threads)
        else:
            render_planes(scene, planes, self.progress, self.threads)

    def synchronize(self) -> None:
        pass

    def get_image(self) -> np.ndarray:
        """(H, W, 4) float32, row 0 at the bottom (a drawing: straight colour and alpha)."""
        scene, planes = self.scene, self.planes
        assert scene is not None and planes is not None, "load() first"
        if scene.drawing is not None:
            from circle_render.cpu.reference_drawing import finish
            return finish(planes, scene.drawing)
        return np.ascontiguousarray(np.moveaxis(planes, 0, 2))


def reference_image(scene: Scene, width: int, height: int, rows: tuple[int, int] | None = None,
                    steps: int = 1) -> np.ndarray:
    """The reference picture after ``steps`` animation steps, as (H, W, 4) float32; with
    ``rows=(lo, hi)`` only those rows are rendered (the returned array is hi-lo rows tall)."""
    scene = scene.copy()
    for _ in range(steps):
        advance(scene)
    if scene.drawing is not None:
        from circle_render.cpu.reference_drawing import drawing_image
        return drawing_image(scene, width, height, rows)
    lo, hi = rows or (0, height)
    planes = np.empty((4, hi - lo, width), dtype=np.float32)
    planes[...] = clear_rows(height, scene.shading).T[:, lo:hi, None]
    _render_rows(scene, planes, width, height, lo)
    return np.ascontiguousarray(np.moveaxis(planes, 0, 2))


def _render_rows(scene: Scene, planes: np.ndarray, width: int, height: int, lo: int) -> None:
    """Blend every circle into rows [lo, lo + planes.shape[1]) of a width x height image."""
    (x0, x1, y0, y1), area, small, runs = _plan(scene, width, height)
    cx, cy = pixel_centres(width), pixel_centres(height)
    band = planes.shape[1]
    bounds = (x0, x1, np.clip(y0 - lo, 0, band).astype(np.int32), np.clip(y1 - lo, 0, band).astype(np.int32))
    _render_band(planes, scene, runs, small, area, bounds, cx, cy[lo:lo + band], None)
