"""The array API: draw your own circles without writing a scene file.

    import circle_render
    img = circle_render.render(positions, radii, colors, 512, 512)   # (512, 512, 4) float32

Circles are blended in index order (index 0 first), each with alpha 1/2 (flat shading) or the
course's snow shading; the picture is cleared to white (flat) or the snow gradient first.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from circle_render import registry
from circle_render.cpu.shading import clear_image
from circle_render.limits import MAX_SIDE, values_problem
from circle_render.scenes.scene import FLAT, SNOW, Scene

NUMBERS = "iuf"     # NumPy kinds accepted: signed and unsigned integers, real floats


def _array(name: str, value: object, shape: tuple[int | None, ...], expected: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (None: any length), every value within the
    limits of circle_render/limits.py; ValueError naming ``name`` and the ``expected`` shape."""
    if isinstance(value, (str, bytes, dict, set, frozenset)) or value is None:
        raise ValueError(f"{name} must be an array of numbers of shape {expected}, got {type(value).__name__}")
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:        # ragged lists, objects NumPy cannot hold
        raise ValueError(f"{name} must be an array of numbers of shape {expected} ({e})") from None
    if a.shape == (0,) and len(shape) == 2 and shape[0] in (None, 0):   # no circles: [] for (0, k)
        a = a.reshape(0, shape[1] or 2)
    if a.dtype.kind not in NUMBERS:
        raise ValueError(f"{name} must hold real numbers (integers or floats), got dtype {a.dtype}"
                         + (": complex values are not truncated silently" if a.dtype.kind == "c" else ""))
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape)):
        raise ValueError(f"{name} must have shape {expected}, got {a.shape}")
    with np.errstate(over="ignore"):            # a longdouble beyond float64: inf, refused below
        a = a.astype(np.float64)
    problem = values_problem(name, a)
    if problem:
        raise ValueError(problem)
    return a


def _side(name: str, side: object) -> int:
    if isinstance(side, (bool, np.bool_)) or not isinstance(side, (int, np.integer)) or not 1 <= side <= MAX_SIDE:
        raise ValueError(f"{name} must be a whole number in 1..{MAX_SIDE}, got {side!r}")
    return int(side)


def render(positions: ArrayLike, radii: ArrayLike, colors: ArrayLike, width: int, height: int,
           renderer: str = "auto", *,
           shading: str = FLAT) -> np.ndarray:
    """Blend n circles, in order, into a ``height`` x ``width`` picture and return it.

    positions: (n, 2) or (n, 3) centres in the unit square, x to the right and y up (a third
    column is the depth, used by snow shading); radii: (n,) in the same units; every value
    finite, |value| <= 1e4, radii >= 1e-9 (circle_render/limits.py); n may be 0;
    colors: (n, 3) r, g, b (ignored by snow shading); renderer: ``auto`` (cuda where a GPU is
    usable, else cpu-fast), ``cpu``, ``cpu-fast``, ``cuda`` or ``cuda-tiled; shading: ``flat`` or ``snow``.
    Returns (height, width, 4) float32 RGBA, row 0 at the bottom (``circle_render.to_bytes``
    turns it into top-first 8-bit RGB for an image file). ValueError for bad input;
    ``circle_render.registry.RendererUnavailable`` when the renderer cannot run here.
    """
    pos = _array("positions", positions, (None, None), "(n, 2) or (n, 3)")
    if pos.shape[1] not in (2, 3):
        raise ValueError(f"positions must have 2 or 3 columns (x, y[, z]), got {pos.shape[1]}")
    n = pos.shape[0]
    rad = _array("radii", radii, (n,), f"({n},), one per position")
    col = _array("colors", colors, (n, 3), f"({n}, 3), r g b per position")
    width, height = _side("width", width), _side("height", height)
    if not isinstance(shading, str) or shading not in (FLAT, SNOW):
        raise ValueError(f"shading must be {FLAT!r} or {SNOW!r}, got {shading!r}")
    if not isinstance(renderer, str) or renderer not in registry.CHOICES:
        raise ValueError(f"unknown renderer {renderer!r}; accepted: {', '.join(registry.CHOICES)}")
    if pos.shape[1] == 2:
        pos = np.concatenate([pos, np.zeros((n, 1))], axis=1)
    scene = Scene("circles", pos, rad, col, shading=shading)
    name = registry.resolve(renderer)
    r = registry.create(name, **({"progress": False} if name == "cpu" else {}))
    if n == 0:                       # nothing to draw: the cleared picture, on every renderer
        return clear_image(width, height, shading)
    r.load(scene, width, height)
    r.clear()
    r.render()
    if hasattr(r, "synchronize"):
        r.synchronize()
    return np.ascontiguousarray(r.get_image())
