"""``Drawing``: what a renderer's drawing path reads, per circle and per picture, in the
layout its kernels take (float32, C-contiguous; docs/drawing.md, "The structures")."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from circle_render.constants import FLAT_ALPHA
from circle_render.drawing.style import Placement, Style
from circle_render.drawing.values import UNIT, Color, check_range, circle_colors, per_circle
from circle_render.scenes.scene import FLAT, SNOW

f32 = np.float32
OPAQUE_BLACK = (0.0, 0.0, 0.0, 1.0)
COURSE_WHITE = (1.0, 1.0, 1.0, 1.0)   # the flat scenes' clear colour


def _f32_color(color: Color | None) -> Color | None:
    if color is None:
        return None
    r, g, b, a = (float(f32(v)) for v in color)
    return (r, g, b, a)


@dataclass(frozen=True, eq=False)
class Drawing:
    """Per circle: ``rgba`` (n, 4) fill colour and alpha (straight); ``edge_rgba`` (n, 4) and
    ``edge_width`` (n,) (picture units), both None without outlines. Per picture:
    ``background`` (straight r, g, b, a as float32 values; None: the shading's own opaque
    clear) and ``antialias``. Made by ``Drawing.build`` (users' options) or from a scene file."""

    rgba: np.ndarray
    edge_rgba: np.ndarray | None = None
    edge_width: np.ndarray | None = None
    background: Color | None = None
    antialias: bool = False

    def __post_init__(self) -> None:
        n = self.rgba.shape[0]
        for name, a, shape in (("rgba", self.rgba, (n, 4)), ("edge_rgba", self.edge_rgba, (n, 4)),
                               ("edge_width", self.edge_width, (n,))):
            if a is not None and (a.shape != shape or a.dtype != np.float32 or not a.flags.c_contiguous):
                raise ValueError(f"Drawing.{name} must be a C-contiguous float32 array of shape {shape}, "
                                 f"got {a.dtype} {a.shape}")
        if (self.edge_rgba is None) != (self.edge_width is None):
            raise ValueError("Drawing.edge_rgba and Drawing.edge_width come together (outlines) or not at all")
        object.__setattr__(self, "background", _f32_color(self.background))

    @property
    def n(self) -> int:
        return int(self.rgba.shape[0])

    @property
    def outlined(self) -> bool:
        return self.edge_rgba is not None

    @property
    def opaque(self) -> bool:
        """An opaque background: the output alpha is 1 everywhere and r, g, b need no division."""
        return self.background is None or self.background[3] == 1

    def course_equivalent(self, shading: str) -> bool:
        """Whether the course's path draws the same picture (docs/drawing.md, "The defaults"):
        the shading's own clear, no anti-aliasing or outline, and flat alpha 0.5 everywhere."""
        clear = self.background is None or (shading == FLAT and self.background == COURSE_WHITE)
        alpha = shading == SNOW or bool((self.rgba[:, 3] == FLAT_ALPHA).all())
        return clear and not self.antialias and not self.outlined and alpha

    def copy(self) -> Drawing:
        return Drawing(self.rgba.copy(), None if self.edge_rgba is None else self.edge_rgba.copy(),
                       None if self.edge_width is None else self.edge_width.copy(),
                       self.background, self.antialias)

    @classmethod
    def build(cls, n: int, shading: str, colors: Any, alpha: Any = None, edge_color: Any = None,
              edge_width: Any = None, style: Style | None = None, placement: Placement | None = None) -> Drawing:
        """The drawing of n circles from a user's options, each checked (one ValueError naming
        the argument). ``placement`` puts outline widths in picture units (None: they are)."""
        style = style or Style()
        rgba = circle_colors("colors", colors, n, single_allowed=False)
        has_alpha_column = bool(n) and not np.isnan(rgba[:, 3]).all()
        if shading == SNOW and (alpha is not None or has_alpha_column):
            raise ValueError("shading='snow' computes each pixel's alpha itself: give (n, 3) colours and no alpha")
        if alpha is not None and has_alpha_column:
            raise ValueError("alpha is given twice: colors has an alpha column (n, 4); pass alpha= only "
                             "with (n, 3) colours")
        if alpha is not None:
            rgba[:, 3] = per_circle("alpha", alpha, n, f"a number {UNIT} or ({n},) of them, one per circle")
            check_range("alpha", rgba[:, 3], 0, 1, UNIT)
        elif not has_alpha_column:
            rgba[:, 3] = FLAT_ALPHA
        edge_rgba = widths = None
        if edge_width is None and edge_color is not None:
            raise ValueError("edge_color needs edge_width: the outline's width in the radius's units "
                             "(a number > 0, or one per circle)")
        if edge_width is not None:
            given = per_circle("edge_width", edge_width, n, f"a number >= 0 or ({n},) of them, in the radius's units")
            check_range("edge_width", given, 0, None, ">= 0 (in the radius's units)")
            if given.any():
                widths = given.astype(np.float32) if placement is None else placement.place_lengths("edge_width", given)
                edge = circle_colors("edge_color", OPAQUE_BLACK if edge_color is None else edge_color, n,
                                     single_allowed=True)
                edge[np.isnan(edge[:, 3]), 3] = 1.0        # an (r, g, b) outline is opaque
                edge_rgba = np.ascontiguousarray(edge, dtype=np.float32)
        return cls(np.ascontiguousarray(rgba, dtype=np.float32), edge_rgba,
                   None if widths is None else np.ascontiguousarray(widths), style.background, style.antialias)
