"""The drawing options: colours with alpha, anti-aliasing, outlines, a background, extent and
pixel units, row order (docs/drawing.md is the contract).

- ``Style``: the per-picture options, checked when made;
- ``Placement``: where a Style puts circles on a W x H picture (round on any picture);
- ``Drawing``: what a renderer's drawing path reads (float32 per-circle arrays), carried by
  ``Scene.drawing``;
- ``support``: which renderers draw drawings.
"""
from circle_render.drawing.paint import Drawing
from circle_render.drawing.style import DATA, LOWER, PIXELS, UPPER, Placement, Style

__all__ = ["DATA", "LOWER", "PIXELS", "UPPER", "Drawing", "Placement", "Style"]
