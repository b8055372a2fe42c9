"""The array API: draw your own circles without writing a scene file.

    import circle_render
    img = circle_render.render(positions, radii, colors, 512, 512)   # (512, 512, 4) float32

Circles are blended in index order (index 0 first), each with alpha 1/2 (flat shading) or the
course's snow shading; the picture is cleared to white (flat) or the snow gradient first.
"""
from __future__ import annotations

import numpy as np

from circle_render import registry
from circle_render.scenes.scene import FLAT, SNOW, Scene

MAX_SIDE = 16384


def _array(name: str, value, shape: tuple) -> np.ndarray:
    a = np.asarray(value, dtype=np.float64)
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape)):
        raise ValueError(f"{name} must have shape {tuple('n' if s is None else s for s in shape)}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite")
    return a


def render(positions, radii, colors, width: int, height: int, renderer: str = "auto", *,
           shading: str = FLAT) -> np.ndarray:
    """Blend n circles, in order, into a ``height`` x ``width`` picture and return it.

    positions: (n, 2) or (n, 3) centres in the unit square, x to the right and y up (a third
    column is the depth, used by snow shading); radii: (n,) in the same units, above 0;
    colors: (n, 3) r, g, b (ignored by snow shading); renderer: ``auto`` (cuda where a GPU is
    usable, else cpu-fast), ``cpu``, ``cpu-fast``, ``cuda`` or ``cuda-tiled; shading: ``flat`` or ``snow``.
    Returns (height, width, 4) float32 RGBA, row 0 at the bottom (``circle_render.to_bytes``
    turns it into top-first 8-bit RGB for an image file). ValueError for bad input;
    ``circle_render.registry.RendererUnavailable`` when the renderer cannot run here.
    """
    pos = _array("positions", positions, (None, None))
    if pos.shape[1] not in (2, 3):
        raise ValueError(f"positions must have 2 or 3 columns (x, y[, z]), got {pos.shape[1]}")
    n = pos.shape[0]
    rad = _array("radii", radii, (n,))
    col = _array("colors", colors, (n, 3))
    if (rad <= 0).any():
        raise ValueError("radii must be above 0")
    for name, side in (("width", width), ("height", height)):
        if not isinstance(side, (int, np.integer)) or not 1 <= side <= MAX_SIDE:
            raise ValueError(f"{name} must be a whole number in 1..{MAX_SIDE}, got {side!r}")
    if shading not in (FLAT, SNOW):
        raise ValueError(f"shading must be {FLAT!r} or {SNOW!r}, got {shading!r}")
    if renderer not in registry.CHOICES:
        raise ValueError(f"unknown renderer {renderer!r}; accepted: {', '.join(registry.CHOICES)}")
    if pos.shape[1] == 2:
        pos = np.concatenate([pos, np.zeros((n, 1))], axis=1)
    scene = Scene("circles", pos, rad, col, shading=shading)
    name = registry.resolve(renderer)
    r = registry.create(name, **({"progress": False} if name == "cpu" else {}))
    r.load(scene, int(width), int(height))
    r.clear()
    r.render()
    if hasattr(r, "synchronize"):
        r.synchronize()
    return np.ascontiguousarray(r.get_image())
