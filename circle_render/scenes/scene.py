"""The circles of one scene: plain float32 arrays, ready for any renderer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from circle_render.drawing.paint import Drawing

FLAT = "flat"   # colour = the circle's colour, alpha = 0.5
SNOW = "snow"   # radial ramp colour, alpha falling off with distance and depth


@dataclass
class Scene:
    """Circles in blend order (index 0 drawn first); positions are (x, y, z) in [0,1]^2 space, y up."""

    name: str
    position: np.ndarray          # (n, 3) float32
    radius: np.ndarray            # (n,) float32
    color: np.ndarray             # (n, 3) float32
    velocity: np.ndarray | None = None   # (n, 3) float32, for animated scenes
    shading: str = FLAT
    animation: str | None = None  # name of the step in renderer.animation, or None
    extra: dict = field(default_factory=dict)  # per-scene animation state (e.g. spark start points)
    drawing: Drawing | None = None  # the drawing options (docs/drawing.md); None for the course's scenes

    def __post_init__(self) -> None:
        n = len(self.radius)
        self.position = np.ascontiguousarray(self.position, dtype=np.float32).reshape(n, 3)
        self.radius = np.ascontiguousarray(self.radius, dtype=np.float32).reshape(n)
        self.color = np.ascontiguousarray(self.color, dtype=np.float32).reshape(n, 3)
        if self.velocity is None:
            self.velocity = np.zeros((n, 3), dtype=np.float32)
        self.velocity = np.ascontiguousarray(self.velocity, dtype=np.float32).reshape(n, 3)
        if self.drawing is not None and self.drawing.n != n:
            raise ValueError(f"the scene has {n} circles but its drawing {self.drawing.n}")

    @property
    def n(self) -> int:
        return len(self.radius)

    def copy(self) -> Scene:
        velocity = None if self.velocity is None else self.velocity.copy()   # never None once made
        return Scene(self.name, self.position.copy(), self.radius.copy(), self.color.copy(),
                     velocity, self.shading, self.animation,
                     {k: np.copy(v) for k, v in self.extra.items()},
                     None if self.drawing is None else self.drawing.copy())
