"""The reference's drawing path: a scene with a ``Drawing`` (colours with alpha, anti-aliasing,
outlines, a background, round circles on any picture), in exact serial order. docs/drawing.md
gives the arithmetic; every line here is that arithmetic in float32, in that order, and the
other renderers must reproduce it bit for bit.

It shares the course path's structure (cpu/reference.py): big circles one by one over their
pixel boxes, small ones in batches of (circle, pixel) pairs ranked per pixel, bands of rows on
threads. The image holds premultiplied colour P (planes 0-2) and the output alpha A (plane 3)
until ``finish`` turns it into straight colour.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from circle_render.constants import AA_INK, AA_PI, PIXEL_CENTRE
from circle_render.cpu.reference_boxes import PAIR_BUDGET, box_views, by_rank, in_bands, pairs, split_runs
from circle_render.cpu.shading import clear_rows, snow_alpha_color
from circle_render.drawing.paint import Drawing
from circle_render.progress import Progress
from circle_render.scenes.scene import SNOW, Scene

f32 = np.float32
ZERO, HALF, ONE = f32(0), f32(0.5), f32(1)

Layer = tuple[np.ndarray, list[Any]]     # effective alpha per pixel, and the three colour values


@dataclass(frozen=True)
class Radius:
    """One radius per circle (the fill's R, or an outline's outer or inner one) with what
    anti-aliasing needs of it, computed once per circle."""

    q: np.ndarray       # (n,) picture units
    rq: np.ndarray      # (n,) ink-corrected radius in pixels: sqrt(max(p*p - 1/12, 0)), p = max(q, 0) * S
    cap: np.ndarray     # (n,) the most a pixel may be covered: min(1, pi * p*p)

    @classmethod
    def of(cls, q: np.ndarray, scale: np.float32) -> Radius:
        p = np.maximum(q, ZERO) * scale
        p2 = p * p
        return cls(q, np.sqrt(np.maximum(p2 - AA_INK, ZERO)), np.minimum(ONE, AA_PI * p2))

    def hit(self, i: Any, d2: np.ndarray) -> np.ndarray:
        """Anti-aliasing off: the pixel centre is inside (q > 0 and d2 <= q*q)."""
        q = self.q[i]
        return (q > ZERO) & (d2 <= q * q)

    def cover(self, i: Any, dp: np.ndarray) -> np.ndarray:
        """Anti-aliasing on: min(max((rq - dp) + 1/2, 0), cap), dp the distance in pixels."""
        return np.minimum(np.maximum((self.rq[i] - dp) + HALF, ZERO), self.cap[i])


@dataclass(frozen=True)
class Prepared:
    """A drawn scene ready to blend: the picture's constants and every circle's radii."""

    scene: Scene
    drawing: Drawing
    width: int
    height: int
    scale: np.float32               # S = max(width, height): pixels per picture unit
    fill: Radius
    outer: Radius | None            # outlines: R + w/2 and R - w/2
    inner: Radius | None

    @classmethod
    def of(cls, scene: Scene, width: int, height: int) -> Prepared:
        drawing = scene.drawing
        assert drawing is not None
        scale = f32(max(width, height))
        outer = inner = None
        if drawing.edge_width is not None:
            half = HALF * drawing.edge_width
            outer, inner = Radius.of(scene.radius + half, scale), Radius.of(scene.radius - half, scale)
        return cls(scene, drawing, width, height, scale, Radius.of(scene.radius, scale), outer, inner)

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each circle's pixel box [x0, x1) x [y0, y1): the course's formula with S around the
        outline's outer radius, plus a pixel with anti-aliasing (docs/drawing.md)."""
        reach = self.fill.q if self.outer is None else self.outer.q
        if self.drawing.antialias:
            reach = reach + ONE / self.scale

        def axis(p: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
            lo = ((p - reach) * self.scale).astype(np.int64)       # truncation toward zero
            hi = ((p + reach) * self.scale).astype(np.int64) + 1
            return np.clip(lo, 0, size).astype(np.int32), np.clip(hi, 0, size).astype(np.int32)
        x0, x1 = axis(self.scene.position[:, 0], self.width)
        y0, y1 = axis(self.scene.position[:, 1], self.height)
        return x0, x1, y0, y1

    def centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Pixel centres of columns and rows in picture units: (1/S) * (i + 0.5)."""
        inv = ONE / self.scale
        return (inv * (np.arange(self.width, dtype=np.float32) + PIXEL_CENTRE),
                inv * (np.arange(self.height, dtype=np.float32) + PIXEL_CENTRE))

    def layers(self, i: Any, d2: np.ndarray) -> list[Layer]:
        """Circle(s) i at squared distances d2: the fill, then the outline (if any), each as
        (effective alpha, colour). ``i`` is one index (d2 a box) or one per value of d2."""
        s, dr = self.scene, self.drawing
        if s.shading == SNOW:
            alpha, color = snow_alpha_color(d2, s.radius[i], s.position[i, 2])
        else:
            alpha, color = dr.rgba[i, 3], list(dr.rgba[i, :3].T)
        if dr.antialias:
            dp = np.sqrt(d2) * self.scale
            out = [(alpha * self.fill.cover(i, dp), color)]
        else:
            dp = d2
            out = [(np.where(self.fill.hit(i, d2), alpha, ZERO), color)]
        if self.outer is not None and self.inner is not None and dr.edge_rgba is not None:
            edge = dr.edge_rgba[i]
            if dr.antialias:
                ring = self.outer.cover(i, dp) - self.inner.cover(i, dp)
                out.append((edge[..., 3] * ring, list(edge[..., :3].T)))
            else:
                ring = self.outer.hit(i, d2) & ~self.inner.hit(i, d2)
                out.append((np.where(ring, edge[..., 3], ZERO), list(edge[..., :3].T)))
        return out


def blend_over(planes: np.ndarray, alpha: np.ndarray, color: list[Any]) -> None:
    """One layer, in place, where alpha > 0: P_k <- a*c_k + (1-a)*P_k (the course's order) and
    A <- a + (1-a)*A (the same with colour 1: a*1 is a). ``planes`` is (4, ...) premultiplied
    colour and alpha. Computed unmasked and copied where alpha > 0: NumPy's masked loops are
    several times slower."""
    shape = (4,) + (1,) * (planes.ndim - 1) if all(np.ndim(c) == 0 for c in color) else None
    paint = (np.array([*color, ONE], dtype=np.float32).reshape(shape) if shape is not None
             else np.stack([np.broadcast_to(np.asarray(c, dtype=np.float32), alpha.shape) for c in color]
                           + [np.ones(alpha.shape, dtype=np.float32)]))
    new = alpha * paint
    new += (ONE - alpha) * planes
    np.copyto(planes, new, where=alpha > ZERO)


def clear_planes(drawing: Drawing, shading: str, height: int) -> np.ndarray:
    """Each row's cleared (P, A), (4, height) float32: P = A_bg * C_bg, A = A_bg; without a
    background the shading's own opaque clear (white, or snow's gradient)."""
    if drawing.background is None:
        return np.ascontiguousarray(clear_rows(height, shading).T)
    c = np.array(drawing.background, dtype=np.float32)
    rows = np.empty((4, height), dtype=np.float32)
    rows[:3] = (c[3] * c[:3])[:, None]
    rows[3] = c[3]
    return rows


def finish(planes: np.ndarray, drawing: Drawing) -> np.ndarray:
    """(4, H, W) premultiplied planes -> (H, W, 4) straight colour and alpha, row 0 at the
    bottom: rgb = P / A where A > 0, else 0 (P itself with an opaque background, where A is 1)."""
    image = np.moveaxis(planes, 0, 2)
    if drawing.opaque:
        return np.ascontiguousarray(image)
    out = np.zeros_like(image)
    alpha = image[..., 3:]
    np.divide(image[..., :3], alpha, out=out[..., :3], where=alpha > ZERO)
    out[..., 3] = image[..., 3]
    return out


def _boxes(planes: np.ndarray, p: Prepared, ids: np.ndarray, bounds: tuple, cx: np.ndarray, cy: np.ndarray,
           bar: Progress | None, stop: Any) -> None:
    """Circles ``ids`` one by one, each over its whole pixel box."""
    for i, d2, box in box_views(planes, p.scene.position, ids, bounds, cx, cy, bar, int(ids[0]), stop):
        for alpha, color in p.layers(i, d2):
            blend_over(box, alpha, color)


def _batch(planes: np.ndarray, p: Prepared, ids: np.ndarray, bounds: tuple, cx: np.ndarray,
           cy: np.ndarray) -> None:
    """Small circles ``ids`` at once: every (circle, pixel) pair with a layer to draw, blended
    rank by rank (each pixel sees its circles in order)."""
    cid, px, py = pairs(ids, bounds)
    dx = p.scene.position[cid, 0] - cx[px]
    dy = p.scene.position[cid, 1] - cy[py]
    d2 = dy * dy + dx * dx
    layers = p.layers(cid, d2)
    keep = np.logical_or.reduce([alpha > ZERO for alpha, _ in layers])
    pix = (py * planes.shape[2] + px)[keep]
    flat = planes.reshape(4, -1)
    layers = [(alpha[keep], [c[keep] if np.ndim(c) else c for c in color]) for alpha, color in layers]
    for sel in by_rank(pix):
        values = flat[:, pix[sel]]
        for alpha, color in layers:
            blend_over(values, alpha[sel], [c[sel] if np.ndim(c) else c for c in color])
        flat[:, pix[sel]] = values


def render_drawing(scene: Scene, planes: np.ndarray, width: int, height: int, row0: int = 0,
                   progress: bool = False, threads: int | None = None) -> np.ndarray:
    """Blend every circle of a drawn scene into ``planes`` ((4, rows, width) premultiplied,
    rows [row0, row0 + rows) of a width x height picture), in place, in serial order."""
    p = Prepared.of(scene, width, height)
    x0, x1, y0, y1 = p.bounds()
    rows = planes.shape[1]
    bounds, area, small, runs = split_runs((x0, x1, np.clip(y0 - row0, 0, rows).astype(np.int32),
                                            np.clip(y1 - row0, 0, rows).astype(np.int32)))
    cx, cy = p.centres()
    cy = cy[row0:row0 + rows]
    bar = Progress(f"rendering {scene.name} ({width}x{height}, cpu, drawing)", scene.n, progress)

    def band(part_rows: np.ndarray, b: tuple, cy_band: np.ndarray, bar: Progress | None, stop: Any) -> None:
        for run in runs:
            if stop is not None and stop.is_set():
                return
            if not small[run[0]]:
                _boxes(part_rows, p, run, b, cx, cy_band, bar, stop)
                continue
            budget = np.cumsum(area[run])
            cuts = np.searchsorted(budget, np.arange(PAIR_BUDGET, budget[-1] + PAIR_BUDGET, PAIR_BUDGET))
            for part in np.split(run, np.unique(np.clip(cuts, 1, run.size))):
                if part.size:
                    _batch(part_rows, p, part, b, cx, cy_band)
                    if bar is not None:
                        bar.update(int(part[-1]) + 1)
    in_bands(band, planes, bounds, cy, bar, threads)
    bar.close()
    return planes


def drawing_image(scene: Scene, width: int, height: int, rows: tuple[int, int] | None = None,
                  threads: int | None = None) -> np.ndarray:
    """A drawn scene's picture, (H, W, 4) float32 straight colour and alpha, row 0 at the
    bottom (with ``rows=(lo, hi)`` only those rows)."""
    assert scene.drawing is not None
    lo, hi = rows or (0, height)
    planes = np.empty((4, hi - lo, width), dtype=np.float32)
    planes[...] = clear_planes(scene.drawing, scene.shading, height)[:, lo:hi, None]
    render_drawing(scene, planes, width, height, lo, threads=threads)
    return finish(planes, scene.drawing)

