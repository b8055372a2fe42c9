"""The circles of one scene: plain float32 arrays, ready for any renderer."""
from __future__ import annotations

from dataclasses import dataclass
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
    color: np.ndarray             # (n, 3) float32
    velocity: np.ndarray          # (n, 3) float32 (zeros unless the scene moves)
    shading: str                  # FLAT or SNOW
    animation: str | None         # name of the step in renderer.animation, or None
    extra: dict[str, np.ndarray]  # per-scene animation state (e.g. spark start points)
    drawing: Drawing | None       # the drawing options (docs/drawing.md); None for the course's scenes

    def __init__(self, name: str, position: ArrayLike, radius: ArrayLike, color: ArrayLike,
                 velocity: ArrayLike | None = None, shading: str = FLAT, animation: str | None = None,
                 extra: dict[str, np.ndarray] | None = None, drawing: Drawing | None = None):
        n = len(np.asarray(radius))
        self.name, self.shading, self.animation, self.extra = name, shading, animation, dict(extra or {})
        self.position = np.ascontiguousarray(position, dtype=np.float32).reshape(n, 3)
        self.radius = np.ascontiguousarray(radius, dtype=np.float32).reshape(n)
        self.color = np.ascontiguousarray(color, dtype=np.float32).reshape(n, 3)
        self.velocity = np.ascontiguousarray(np.zeros((n, 3)) if velocity is None else velocity,
                                             dtype=np.float32).reshape(n, 3)
        self.drawing = drawing
        if drawing is not None and drawing.n != n:
            raise ValueError(f"the scene has {n} circles but its drawing {drawing.n}")

    @property
    def n(self) -> int:
        return len(self.radius)

    def copy(self) -> Scene:
        return Scene(self.name, self.position.copy(), self.radius.copy(), self.color.copy(),
                     self.velocity.copy(), self.shading, self.animation,
                     {k: np.copy(v) for k, v in self.extra.items()},
                     None if self.drawing is None else self.drawing.copy())
