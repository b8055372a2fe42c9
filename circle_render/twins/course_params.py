"""Twin of kernels/course_params.cu: the course's position and radius arrays from float4 circles."""
from __future__ import annotations

import numpy as np


def split_circles(circles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 4) float32 circles -> (3n positions x, y, z; n radii), float32."""
    c = np.asarray(circles, dtype=np.float32)
    return np.ascontiguousarray(c[:, :3]).ravel(), np.ascontiguousarray(c[:, 3])
