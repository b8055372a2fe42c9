"""The course's clear colours, coverage test and blending, in float32 (NumPy).

Shared by every CPU code path so that they cannot drift apart; kernels/shade.cuh is the CUDA
twin. Each function documents the exact float32 operation order it reproduces.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.constants import (
    PIXEL_CENTRE,
    SNOW_ALPHA_BASE,
    SNOW_ALPHA_DEPTH,
    SNOW_FALLOFF,
    SNOW_MAX_ALPHA,
    SNOW_RAMP,
)
from circle_render.scenes.scene import SNOW, Scene

f32 = np.float32


def clear_rows(height: int, shading: str) -> np.ndarray:
    """The clear colour of each row, (height, 4) float32; row 0 is the bottom of the picture."""
    rows = np.ones((height, 4), dtype=np.float32)
    if shading == SNOW:
        j = np.arange(height, dtype=np.int64)
        # 0.4 + (0.45 * (H - j)) / H, left to right, in float32
        shade = f32(0.4) + (f32(0.45) * (height - j).astype(np.float32)) / f32(height)
        rows[:, :3] = shade.astype(np.float32)[:, None]
    return rows


def clear_image(width: int, height: int, shading: str) -> np.ndarray:
    """The cleared (height, width, 4) float32 image."""
    return np.repeat(clear_rows(height, shading)[:, None, :], width, axis=1)


def pixel_centres(size: int) -> np.ndarray:
    """Normalised pixel centres: (1/size) * (i + 0.5), as the course computes them."""
    return f32(1) / f32(size) * (np.arange(size, dtype=np.float32) + PIXEL_CENTRE)


Bounds = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]     # x0, x1, y0, y1: one value a circle


def circle_bounds(position: np.ndarray, radius: np.ndarray, width: int, height: int) -> Bounds:
    """Each circle's pixel box [x0, x1) x [y0, y1), clamped to the image (int32 arrays)."""
    def axis(p: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        lo = ((p - radius) * f32(size)).astype(np.int64)      # truncation toward zero
        hi = ((p + radius) * f32(size)).astype(np.int64) + 1
        return np.clip(lo, 0, size).astype(np.int32), np.clip(hi, 0, size).astype(np.int32)
    x0, x1 = axis(position[:, 0], width)
    y0, y1 = axis(position[:, 1], height)
    return x0, x1, y0, y1


def covered(d2: np.ndarray, radius: np.ndarray | np.float32) -> np.ndarray:
    """A pixel is covered when dx*dx + dy*dy <= r*r (float32)."""
    return d2 <= radius * radius


def snow_alpha_color(d2: np.ndarray, radius: np.ndarray | np.float32,
                     depth: np.ndarray | np.float32) -> tuple[np.ndarray, list[np.ndarray]]:
    """Snow shading at squared distances d2: (alpha, [r, g, b]), float32 arrays like d2."""
    d = np.sqrt(d2) / radius
    scaled = d * f32(len(SNOW_RAMP) - 1)
    # clamped before the cast: far outside a tiny circle ``scaled`` is beyond int32 (the cast of
    # such a float is undefined); inside the circle it is at most the last index anyway
    last = len(SNOW_RAMP) - 1
    base = np.minimum(scaled, f32(last)).astype(np.int32)
    weight = scaled - base.astype(np.float32)
    nxt = np.minimum(base + 1, last)
    color = [(f32(1) - weight) * SNOW_RAMP[base, c] + weight * SNOW_RAMP[nxt, c] for c in range(3)]
    max_alpha = SNOW_ALPHA_BASE + SNOW_ALPHA_DEPTH * (f32(1) - depth)
    max_alpha = SNOW_MAX_ALPHA * np.clip(max_alpha, f32(0), f32(1))
    falloff = (f32(-1) * SNOW_FALLOFF * d) * d
    # exp in double, rounded once to float32: the correctly rounded expf on every platform
    alpha = max_alpha * np.exp(falloff.astype(np.float64)).astype(np.float32)
    return alpha.astype(np.float32), color


def blend_planes(planes: Any, alpha: Any, colors: Any, where: np.ndarray | None = None) -> None:
    """In place, channel by channel: c <- alpha*colour_c + (1-alpha)*c, then a <- a + alpha.

    ``planes`` are the four channel arrays (or views); ``colors`` the three colour values or
    arrays; ``where`` limits the update to covered pixels.
    """
    one_minus = f32(1) - alpha
    for plane, color in zip(planes[:3], colors):
        np.add(alpha * color, one_minus * plane, out=plane, where=True if where is None else where)
    np.add(planes[3], alpha, out=planes[3], where=True if where is None else where)


def to_bytes(img: np.ndarray) -> np.ndarray:
    """(H, W, 4) float image, bottom row first -> (H, W, 3) uint8, top row first, int(255*clamp)."""
    rgb = np.clip(img[::-1, :, :3], f32(0), f32(1))
    return (rgb * f32(255)).astype(np.uint8)


def to_rgba_bytes(img: np.ndarray) -> np.ndarray:
    """(H, W, 4) straight colour and alpha, bottom row first -> (H, W, 4) uint8, top row first,
    int(255*clamp) per channel (docs/drawing.md: PNG keeps the alpha)."""
    rgba = np.clip(img[::-1], f32(0), f32(1))
    return (rgba * f32(255)).astype(np.uint8)


def picture_bytes(img: np.ndarray, scene: Scene) -> np.ndarray:
    """The 8-bit picture to write for ``scene``: RGBA where its drawing's background is not
    opaque (so the output alpha means something), else RGB as the course writes it."""
    drawing = scene.drawing
    return to_rgba_bytes(img) if drawing is not None and not drawing.opaque else to_bytes(img)
