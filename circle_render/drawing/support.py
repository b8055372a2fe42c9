"""Which renderers draw a scene's drawing (``Scene.drawing``): those whose class says
``draws_drawings = True``. A drawing is never handed to one that would ignore it."""
from __future__ import annotations

import importlib

from circle_render import registry
from circle_render.errors import UserError
from circle_render.gpu import gpu_available

FASTEST_FIRST = ("cuda", "cpu-fast", "cpu")     # what ``auto`` tries for a drawing, in order


class DrawingUnsupported(UserError, ValueError):
    """A renderer asked to draw a drawing it has no path for; the message says which can."""


def draws_drawings(renderer: object) -> bool:
    """Whether a renderer (an instance or a class) draws ``Scene.drawing``."""
    return bool(getattr(renderer, "draws_drawings", False))


def renderer_class(name: str) -> type:
    """A built-in renderer's class, without making one."""
    info = registry.RENDERERS[name]
    cls: type = getattr(importlib.import_module(info.module), info.cls)
    return cls


def drawers() -> list[str]:
    """The built-in renderers that draw drawings, fastest first."""
    return [name for name in FASTEST_FIRST if draws_drawings(renderer_class(name))]


def drawing_renderer(name: str) -> str:
    """The renderer to draw a drawing with when ``name`` was asked for: ``name`` itself if it
    draws drawings (a user's ``module:Class`` is checked once created), for ``auto`` the fastest
    one that does and can run here; else DrawingUnsupported."""
    if registry.is_user_spec(name):
        return name
    if name == "auto":
        usable = [d for d in drawers() if not registry.RENDERERS[d].needs_gpu or gpu_available()]
        return usable[0]
    if name in registry.RENDERERS and not draws_drawings(renderer_class(name)):
        raise DrawingUnsupported(f"renderer {name!r} does not draw the drawing options (an alpha other than "
                                 f"0.5, a background other than the course's, anti-aliasing, outlines, "
                                 f"non-square snow pictures) yet; accepted: {', '.join(['auto', *drawers()])}")
    return name


def check_drawer(renderer: object, scene_drawing: object) -> None:
    """Refuse a created renderer (a user's class too) that would ignore the scene's drawing."""
    if scene_drawing is not None and not draws_drawings(renderer):
        name = getattr(renderer, "name", type(renderer).__name__)
        raise DrawingUnsupported(f"renderer {name!r} does not draw the drawing options of this scene; "
                                 f"yet; accepted: {', '.join(['auto', *drawers()])}")


ALPHA_SUFFIXES = (".png",)          # image formats that keep an alpha channel


def command_renderer(name: str, scene: object, output: object, interactive: bool) -> str:
    """``render FILE -r NAME``: the renderer for a scene (``name`` unless the scene has a drawing
    that ``name`` does not draw: ``auto`` picks one, with a notice; a named one is refused),
    after refusing what a drawing cannot do: the viewer, and an output format without alpha for
    a picture that has one."""
    drawing = getattr(scene, "drawing", None)
    if drawing is None:
        return name
    if interactive:
        raise DrawingUnsupported("the viewer (-i) does not draw the drawing options of a version 2 scene "
                                 "file yet; write a picture with -o FILE.png")
    suffix = str(getattr(output, "suffix", "")).lower()
    if output is not None and not drawing.opaque and suffix not in ALPHA_SUFFIXES:
        raise DrawingUnsupported(f"this scene's background is not opaque and a {suffix or 'suffix-less'} file keeps "
                                 "no alpha channel; write a .png")
    chosen = drawing_renderer(name)
    if name == "auto" and chosen != registry.resolve("auto"):
        from circle_render.progress import notice
        notice(f"render: {registry.resolve('auto')} does not draw this scene's drawing options yet; using {chosen}")
    return chosen
