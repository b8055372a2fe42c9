"""The array API: draw your own circles without writing a scene file.

    import circle_render
    img = circle_render.render(positions, radii, colors, 512, 512)   # (512, 512, 4) float32
    img = circle_render.render(positions, radii, rgba, 640, 480, antialias=True,
                               background="transparent", origin="upper")

Circles are blended in index order (index 0 first), each with its alpha (1/2 unless told) or
the course's snow shading, over white (or the snow gradient) unless another background is
given. docs/drawing.md is the contract of the drawing options.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from circle_render import registry
from circle_render.cpu.reference_drawing import drawing_image
from circle_render.cpu.shading import clear_image
from circle_render.drawing import DATA, LOWER, Drawing, Placement, Style
from circle_render.drawing.support import drawing_renderer, draws_drawings, renderer_class
from circle_render.drawing.values import number_array
from circle_render.interface import Renderer
from circle_render.limits import MAX_SIDE, values_problem
from circle_render.scenes.scene import FLAT, SNOW, Scene


def _array(name: str, value: Any, shape: tuple[int | None, ...], expected: str, limits: bool = True) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (None: any length), every value within the
    limits of circle_render/limits.py (``limits=False``: checked once placed, by Placement);
    ValueError naming ``name`` and the ``expected`` shape."""
    a = number_array(name, value, f"an array of numbers of shape {expected}")
    if a.shape == (0,) and len(shape) == 2 and shape[0] in (None, 0):   # no circles: [] for (0, k)
        a = a.reshape(0, shape[1] or 2)
    if a.ndim != len(shape) or any(want is not None and got != want for got, want in zip(a.shape, shape)):
        raise ValueError(f"{name} must have shape {expected}, got {a.shape}")
    problem = values_problem(name, a) if limits else None
    if problem:
        raise ValueError(problem)
    return a


def _side(name: str, side: Any) -> int:
    if isinstance(side, (bool, np.bool_)) or not isinstance(side, (int, np.integer)) or not 1 <= side <= MAX_SIDE:
        raise ValueError(f"{name} must be a whole number in 1..{MAX_SIDE}, got {side!r}")
    return int(side)


def render(positions: Any, radii: Any, colors: Any, width: int, height: int, renderer: str = "auto", *,
           shading: str = FLAT, alpha: Any = None, background: Any = None, antialias: bool = False,
           edge_color: Any = None, edge_width: Any = None, extent: Any = None, units: str = DATA,
           origin: str = LOWER) -> np.ndarray:
    """Blend n circles, in order, into a ``height`` x ``width`` picture and return it.

    positions: (n, 2) or (n, 3) centres, x to the right and y up (a third column is the depth,
    used by snow shading), in ``extent``'s units (default: the unit square spans the picture)
    or, with ``units="pixels"``, pixel coordinates of the returned array; radii: (n,) in x
    units. Circles are round on any picture. colors: (n, 3) r, g, b or (n, 4) r, g, b, alpha.
    n may be 0. renderer: ``auto`` (cuda where a GPU is usable, else cpu-fast), ``cpu``,
    ``cpu-fast``, ``cuda`` or ``cuda-tiled``; shading: ``flat`` or ``snow``.

    Drawing options (docs/drawing.md): ``alpha`` (a number in [0, 1] or (n,); default 0.5),
    ``background`` (a colour, ``"transparent"`` included; default white), ``antialias``,
    ``edge_color`` and ``edge_width`` (outlines, width in x units), ``extent`` (x0, x1, y0, y1),
    ``units`` (``"data"`` or ``"pixels"``), ``origin`` (``"lower"``: row 0 of the result is the
    bottom; ``"upper"``: the top).

    Returns (height, width, 4) float32: straight r, g, b and the output alpha (1 everywhere
    with an opaque background). ``circle_render.to_bytes`` turns a ``"lower"`` picture into
    top-first 8-bit RGB. One ValueError names a bad argument and what it accepts;
    ``circle_render.registry.RendererUnavailable`` when the renderer cannot run here.
    """
    pos = _array("positions", positions, (None, None), "(n, 2) or (n, 3)", limits=False)
    if pos.shape[1] not in (2, 3):
        raise ValueError(f"positions must have 2 or 3 columns (x, y[, z]), got {pos.shape[1]}")
    n = pos.shape[0]
    rad = _array("radii", radii, (n,), f"({n},), one per position", limits=False)
    width, height = _side("width", width), _side("height", height)
    if not isinstance(shading, str) or shading not in (FLAT, SNOW):
        raise ValueError(f"shading must be {FLAT!r} or {SNOW!r}, got {shading!r}")
    if not isinstance(renderer, str) or renderer not in registry.CHOICES:
        raise ValueError(f"unknown renderer {renderer!r}; accepted: {', '.join(registry.CHOICES)}")
    style = Style(background, antialias, extent, units, origin)
    place = Placement.of(style, width, height)
    xyz, r = place.place(pos, rad)
    drawing = Drawing.build(n, shading, colors, alpha, edge_color, edge_width, style, place)
    scene = Scene("circles", xyz, r, drawing.rgba[:, :3], shading=shading)
    if drawing.course_equivalent(shading) and _course_path(shading, renderer, width, height):
        return place.orient(_course_picture(scene, renderer, width, height))
    scene.drawing = drawing
    name = drawing_renderer(renderer)
    r = registry.create(name, **_quiet(name))
    if n == 0:                       # nothing to draw: the cleared picture, on every renderer
        return place.orient(drawing_image(scene, width, height))
    return place.orient(_draw(r, scene, width, height))


def _quiet(name: str) -> dict[str, bool]:
    return {"progress": False} if name == "cpu" else {}


def _draw(r: Renderer, scene: Scene, width: int, height: int) -> np.ndarray:
    r.load(scene, width, height)
    r.clear()
    r.render()
    r.synchronize()
    return np.ascontiguousarray(r.get_image())


def _course_path(shading: str, renderer: str, width: int, height: int) -> bool:
    """Whether a course-equivalent picture is drawn by the course's path: always on a square
    picture; on another, by a renderer without a drawing path (the S x S picture cropped,
    S^2 pixels of memory: until every renderer draws drawings), and never for snow, whose
    clear runs over the picture's own rows."""
    if width == height:
        return True
    return shading == FLAT and not draws_drawings(renderer_class(registry.resolve(renderer)))


def _course_picture(scene: Scene, renderer: str, width: int, height: int) -> np.ndarray:
    """A course-equivalent picture (docs/drawing.md, "The defaults") by the course's path on
    any renderer: on the S x S picture, cropped to the W x H corner; output alpha 1."""
    side = max(width, height)
    name = registry.resolve(renderer)
    r = registry.create(name, **_quiet(name))
    # nothing to draw: the cleared picture, on every renderer
    image = clear_image(width, height, scene.shading) if scene.n == 0 else _draw(r, scene, side, side)[:height, :width]
    image = np.ascontiguousarray(image)
    image[..., 3] = 1
    return image
