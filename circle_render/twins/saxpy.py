"""Twin of kernels/saxpy.cu."""
from __future__ import annotations

import numpy as np


def saxpy_f32(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """a * x + y in float32 (multiply, then add: no fused multiply-add)."""
    return (np.float32(a) * x.astype(np.float32) + y.astype(np.float32)).astype(np.float32)
