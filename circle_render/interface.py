"""The renderer interface every renderer implements (built-in ones and users' own).

A renderer is any class with these methods; ``render check --renderer module:Class`` accepts
such a class too. Images are (height, width, 4) float32 NumPy arrays, row 0 at the bottom.

    class MyRenderer:
        name = "mine"
        needs_gpu = True                             # optional: render check refuses, in one
                                                     # line, to run it where no GPU is usable
        def load(self, scene, width, height): ...   # scene: circle_render.scenes.Scene (copy what you keep)
        def clear(self): ...                         # start a frame with the clear colour
        def advance(self): ...                       # one animation step (scene.animation)
        def render(self): ...                        # blend every circle, in index order
        def synchronize(self): ...                   # wait for queued device work (or pass)
        def get_image(self): ...                     # -> np.ndarray (H, W, 4) float32
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from circle_render.scenes.scene import Scene


class Renderer(Protocol):
    name: str

    def load(self, scene: Scene, width: int, height: int) -> None: ...
    def clear(self) -> None: ...
    def advance(self) -> None: ...
    def render(self) -> None: ...
    def synchronize(self) -> None: ...
    def get_image(self) -> np.ndarray: ...
