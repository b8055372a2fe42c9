"""The circles of one scene: plain float32 arrays, ready for any renderer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from circle_render.drawing.paint import Drawing

FLAT = "flat"   # colour = the circle's colour, alpha = 0.5
SNOW = "snow"   # radial ramp colour, alpha falling off with distance and depth


@dataclass(init=False)
class Scene:
    """Circles in blend order (index 0 drawn first); positions are (x, y, z) in [0,1]^2 space, y up."""

    name: str
    position: np.ndarray          # (n, 3) float32
    radius: np.ndarray            # (n,) float32
    color: np.ndarray             # (n, 3) float32 (Scene.sharing: its rows may be strided)
    shading: str                  # FLAT or SNOW
    animation: str | None         # name of the step in renderer.animation, or None
    extra: dict[str, np.ndarray]  # per-scene animation state (e.g. spark start points)
    drawing: Drawing | None       # the drawing options (docs/drawing.md); None for the course's scenes
    _velocity: np.ndarray | None = field(default=None, repr=False, compare=False)    # see velocity

    def __init__(self, name: str, position: ArrayLike, radius: ArrayLike, color: ArrayLike,
                 velocity: ArrayLike | None = None, shading: str = FLAT, animation: str | None = None,
                 extra: dict[str, np.ndarray] | None = None, drawing: Drawing | None = None):
        n = len(np.asarray(radius))
        self.name, self.shading, self.animation, self.extra = name, shading, animation, dict(extra or {})
        self.position = np.ascontiguousarray(position, dtype=np.float32).reshape(n, 3)
        self.radius = np.ascontiguousarray(radius, dtype=np.float32).reshape(n)
        self.color = np.ascontiguousarray(color, dtype=np.float32).reshape(n, 3)
        self._velocity = None if velocity is None else np.ascontiguousarray(velocity, dtype=np.float32).reshape(n, 3)
        self.drawing = drawing
        if drawing is not None and drawing.n != n:
            raise ValueError(f"the scene has {n} circles but its drawing {drawing.n}")

    @classmethod
    def sharing(cls, name: str, position: np.ndarray, radius: np.ndarray, color: np.ndarray, shading: str = FLAT,
                drawing: Drawing | None = None) -> Scene:
        """A scene over the caller's float32 arrays, none copied: position (n, 3) and radius (n,)
        C-contiguous, color (n, 3) with contiguous rows but maybe strided (a view of (n, 4)
        colours and alpha). For a renderer that keeps them as they are (cpu-fast under a
        Canvas, which never changes an array it handed over); Scene() makes its own."""
        n = len(radius)
        if not (position.shape == (n, 3) and radius.shape == (n,) and color.shape == (n, 3)
                and position.flags.c_contiguous and radius.flags.c_contiguous and color.strides[1] == 4
                and position.dtype == radius.dtype == color.dtype == np.float32):
            raise ValueError("Scene.sharing takes float32 (n, 3) positions, (n,) radii and (n, 3) colours")
        scene = cls.__new__(cls)
        scene.name, scene.shading, scene.animation, scene.extra, scene.drawing = name, shading, None, {}, drawing
        scene.position, scene.radius, scene.color, scene._velocity = position, radius, color, None
        return scene

    @property
    def n(self) -> int:
        return len(self.radius)

    @property
    def velocity(self) -> np.ndarray:
        """(n, 3) float32; zeros unless the scene moves, made on first use: a million circles
        drawn once need no 12 MB of them."""
        if self._velocity is None:
            self._velocity = np.zeros((self.n, 3), np.float32)
        return self._velocity

    @velocity.setter
    def velocity(self, value: np.ndarray) -> None:
        self._velocity = value

    def copy(self) -> Scene:
        return Scene(self.name, self.position.copy(), self.radius.copy(), self.color.copy(),
                     None if self._velocity is None else self._velocity.copy(), self.shading, self.animation,
                     {k: np.copy(v) for k, v in self.extra.items()},
                     None if self.drawing is None else self.drawing.copy())
