"""circle-render: the CMU 15-418 / Stanford CS149 circle renderer in Python.

    import circle_render
    img = circle_render.render(positions, radii, colors, 512, 512)    # your own circles
    canvas = circle_render.Canvas(1024, 1024).set(positions, radii, colors)   # frame after frame
    scene = circle_render.make_scene("rand10k")                        # the course's scenes

The command line is ``render`` (circle_render/cli.py); the layout is in docs/architecture.md.
The names below are imported when first used, so that ``render`` handles Ctrl-C before NumPy
and the rest load (circle_render/__main__.py).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"
__all__ = ["SCENE_NAMES", "Canvas", "__version__", "make_scene", "render", "show", "to_bytes"]

_LAZY = {"render": "circle_render.api", "to_bytes": "circle_render.io.pixels", "Canvas": "circle_render.canvas",
         "show": "circle_render.display.viewer", "SCENE_NAMES": "circle_render.scenes",
         "make_scene": "circle_render.scenes"}

if TYPE_CHECKING:
    from circle_render.api import render
    from circle_render.canvas import Canvas
    from circle_render.display.viewer import show
    from circle_render.io.pixels import to_bytes
    from circle_render.scenes import SCENE_NAMES, make_scene


def __getattr__(name: str) -> Any:
    """The public names on first use; a subpackage (``circle_render.scenes``) as its attribute."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
