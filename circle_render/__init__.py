"""circle-render: the CMU 15-418 / Stanford CS149 circle renderer in Python.

    import circle_render
    img = circle_render.render(positions, radii, colors, 512, 512)    # your own circles
    scene = circle_render.make_scene("rand10k")                        # the course's scenes

The command line is ``render`` (circle_render/cli.py); the layout is in docs/architecture.md.
"""
__version__ = "0.2.0"

from circle_render.api import render
from circle_render.cpu.shading import to_bytes
from circle_render.scenes import SCENE_NAMES, make_scene

__all__ = ["SCENE_NAMES", "__version__", "make_scene", "render", "to_bytes"]
