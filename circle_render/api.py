"""The array API: draw your own circles without writing a scene file.

    import circle_render
    img = circle_render.render(positions, radii, colors, 512, 512)   # (512, 512, 4) float32
    img = circle_render.render(positions, radii, rgba, 640, 480, antialias=True,
                               background="transparent", origin="upper")

Circles are blended in index order (index 0 first), each with its alpha (1/2 unless told) or
the course's snow shading, over white (or the snow gradient) unless another background is
given. docs/drawing.md is the contract of the drawing options. ``render()`` is one frame of a
``circle_render.Canvas`` (canvas/canvas.py), which keeps its renderer between frames.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render.canvas import Canvas
from circle_render.drawing import DATA, LOWER
from circle_render.scenes.scene import FLAT


def render(positions: Any, radii: Any, colors: Any, width: int, height: int, renderer: str = "auto", *,
           shading: str = FLAT, alpha: Any = None, background: Any = None, antialias: bool = False,
           edge_color: Any = None, edge_width: Any = None, extent: Any = None, units: str = DATA,
           origin: str = LOWER, dtype: Any = np.float32) -> np.ndarray:
    """Blend n circles, in order, into a ``height`` x ``width`` picture and return it.

    positions: (n, 2) or (n, 3) centres, x to the right and y up (a third column is the depth,
    used by snow shading), in ``extent``'s units (default: the unit square spans the picture)
    or, with ``units="pixels"``, pixel coordinates of the returned array; radii: (n,) in x
    units. Circles are round on any picture. colors: (n, 3) r, g, b or (n, 4) r, g, b, alpha.
    n may be 0. Arrays may be NumPy arrays (float32 is used as it is) or CUDA arrays (CuPy,
    PyTorch, JAX, Numba: read on the GPU by the CUDA renderers). renderer: ``auto`` (cuda
    where a GPU is usable, else cpu-fast), ``cpu``, ``cpu-fast``, ``cuda`` or ``cuda-tiled``;
    shading: ``flat`` or ``snow``.

    Drawing options (docs/drawing.md): ``alpha`` (a number in [0, 1] or (n,); default 0.5),
    ``background`` (a colour, ``"transparent"`` included; default white), ``antialias``,
    ``edge_color`` and ``edge_width`` (outlines, width in x units), ``extent`` (x0, x1, y0, y1),
    ``units`` (``"data"`` or ``"pixels"``), ``origin`` (``"lower"``: row 0 of the result is the
    bottom; ``"upper"``: the top).

    Returns (height, width, 4): float32 straight r, g, b and the output alpha (1 everywhere
    with an opaque background), or with ``dtype=numpy.uint8`` 8-bit values (``int(255 *
    clamp(v))``, converted where the picture was drawn). ``circle_render.to_bytes`` turns a
    ``"lower"`` float picture into top-first 8-bit RGB. One ValueError names a bad argument and
    what it accepts; ``circle_render.registry.RendererUnavailable`` when the renderer cannot
    run here. To draw many frames, keep a ``circle_render.Canvas``.
    """
    canvas = Canvas(width, height, renderer, shading=shading, background=background, antialias=antialias,
                    extent=extent, units=units, origin=origin)
    canvas.set(positions, radii, colors, alpha=alpha, edge_color=edge_color, edge_width=edge_width)
    return canvas.render()._take_picture(dtype)      # the renderer's image itself where it can be
