"""Twin of kernels/draw_drawing.cu, the fast renderer's drawing draw: per pixel, the circles whose
box holds it composited front to back (each circle's outline, then its fill; the reference's
layers, cpu/reference_drawing.py), a pixel stopping once its transmittance T is below T_EPS, then
laid over the clear: P = acc + T * clear, A = 1 with an opaque background (where serial blending
gives exactly 1), else accA + T * clear alpha. The kernel fuses multiply-adds where this rounds
each operation; both are the reference within ``tolerance``."""
from __future__ import annotations

import numpy as np

from circle_render.constants import T_EPS
from circle_render.cpu.reference_drawing import Prepared, clear_planes
from circle_render.scenes.scene import Scene

f32 = np.float32


def draw_drawing(scene: Scene, width: int, height: int) -> np.ndarray:
    """(height, width, 4) float32 premultiplied P (r, g, b) and A, row 0 at the bottom."""
    drawing = scene.drawing
    assert drawing is not None
    p = Prepared.of(scene, width, height)
    x0, x1, y0, y1 = p.bounds()
    cx, cy = p.centres()
    acc = np.zeros((4, height, width), dtype=np.float32)
    T = np.ones((height, width), dtype=np.float32)
    for i in range(scene.n - 1, -1, -1):                # front to back
        if x0[i] >= x1[i] or y0[i] >= y1[i]:
            continue
        ys, xs = slice(y0[i], y1[i]), slice(x0[i], x1[i])
        dx = scene.position[i, 0] - cx[xs]
        dy = scene.position[i, 1] - cy[ys]
        d2 = dy[:, None] * dy[:, None] + dx[None, :] * dx[None, :]
        live = T[ys, xs] >= f32(T_EPS)                  # decided once a circle: both its layers
        for a, color in reversed(p.layers(i, d2)):      # the outline (in front), then the fill
            a = np.broadcast_to(a, d2.shape)
            on = live & (a > 0)
            t = T[ys, xs]
            w = t * a
            for k in range(3):
                c = np.asarray(color[k], dtype=np.float32)
                acc[k, ys, xs] = np.where(on, acc[k, ys, xs] + w * c, acc[k, ys, xs])
            acc[3, ys, xs] = np.where(on, acc[3, ys, xs] + w, acc[3, ys, xs])
            T[ys, xs] = np.where(on, t - a * t, t)
    rows = clear_planes(drawing, scene.shading, height)[:, :, None]
    out = np.empty((height, width, 4), dtype=np.float32)
    for k in range(3):
        out[..., k] = acc[k] + T * rows[k]
    out[..., 3] = f32(1) if drawing.opaque else acc[3] + T * rows[3]
    return out


def tolerance(scene: Scene) -> float:
    """The largest |difference| from the reference's picture (straight colour) that the drawing
    path may show: what the circles behind a finished pixel would still add, T_EPS times the
    largest colour magnitude (circles', outlines', background's; at least 1), plus float32
    rounding over a pixel's layers."""
    drawing = scene.drawing
    assert drawing is not None
    parts = [np.abs(drawing.rgba[:, :3]).ravel(), [1.0]]
    if drawing.edge_rgba is not None:
        parts.append(np.abs(drawing.edge_rgba[:, :3]).ravel())
    if drawing.background is not None:
        parts.append(np.abs(drawing.background[:3]))
    top = float(max(np.max(part) if len(part) else 0.0 for part in parts))
    return (T_EPS + 5e-5) * top
