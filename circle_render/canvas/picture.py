"""The Canvas's picture on the host: from a renderer's image (row 0 at the bottom, possibly
the course's larger S x S picture), cropped to the canvas, rows in the order asked for, the
alpha channel set to 1 on the course's path (whose alpha counts circles), as float32 or as
8-bit values (``int(255 * clamp(v, 0, 1))``, the course's rule, alpha included). The GPU's
twin is canvas/on_gpu.py ``picture``."""
from __future__ import annotations

import numpy as np

from circle_render.io.pixels import FramePixels

f32 = np.float32
DTYPES = (np.dtype(np.float32), np.dtype(np.uint8))


def picture_dtype(dtype: object) -> np.dtype:
    """float32 (the default) or uint8, else ValueError."""
    try:
        chosen = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError:
        chosen = None
    if chosen not in DTYPES:
        raise ValueError(f"dtype must be numpy.float32 or numpy.uint8, got {dtype!r}")
    return chosen


def host_picture(image: np.ndarray, width: int, height: int, flip: bool, opaque: bool, dtype: np.dtype) -> np.ndarray:
    """(height, width, 4) of ``dtype`` from ``image`` ((H', W', 4) float32, row 0 at the
    bottom, H' >= height, W' >= width); ``flip``: row 0 at the top; ``opaque``: alpha 1."""
    corner = image[:height, :width]
    if dtype == np.uint8:
        # FramePixels writes the top row first: give it the rows upside down for "lower"
        out = FramePixels(corner if flip else corner[::-1], alpha=True).rgb()
        if opaque:
            out[..., 3] = 255
        return out
    out = np.empty((height, width, 4), f32)
    np.copyto(out, corner[::-1] if flip else corner)
    if opaque:
        out[..., 3] = 1
    return out
