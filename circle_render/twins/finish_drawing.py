"""Twin of kernels/finish_drawing.cu: premultiplied colour to straight colour (docs/drawing.md,
"Output"), bit for bit (both divide correctly rounded)."""
from __future__ import annotations

import numpy as np


def finish_drawing(image: np.ndarray) -> np.ndarray:
    """(..., 4) float32 P (r, g, b) and A -> straight r, g, b = P / A where A > 0, else 0; alpha A."""
    out = np.zeros_like(image)
    alpha = image[..., 3:]
    np.divide(image[..., :3], alpha, out=out[..., :3], where=alpha > 0)
    out[..., 3] = image[..., 3]
    return out
