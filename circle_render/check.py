"""The course's correctness rule: compare r, g, b of two images, alpha ignored."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOLERANCE = 0.1        # a value further than this from the reference is a mismatch
MAX_MISMATCHES = 5     # more than this many mismatches fails the check


@dataclass
class Comparison:
    mismatches: np.ndarray    # (k, 3) int: x, y, channel of each mismatch (y = 0 at the bottom)
    reference: np.ndarray     # (k,) the reference values there
    actual: np.ndarray        # (k,) the compared values there
    max_abs_diff: float       # largest |difference| over all finite r, g, b values

    @property
    def count(self) -> int:
        return len(self.mismatches)

    @property
    def passed(self) -> bool:
        return self.count <= MAX_MISMATCHES


def compare(reference: np.ndarray, actual: np.ndarray) -> Comparison:
    """Compare two (H, W, 4) images by the course's rule (non-finite values are mismatches)."""
    if reference.shape != actual.shape:
        raise ValueError(f"image shapes differ: {reference.shape} vs {actual.shape}")
    ref = reference[..., :3].astype(np.float32)
    got = actual[..., :3].astype(np.float32)
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - ref)
        bad = ~np.isfinite(got) | (diff > TOLERANCE)
    y, x, c = np.nonzero(bad)
    finite = np.isfinite(diff)
    worst = float(diff[finite].max()) if finite.any() else 0.0
    return Comparison(np.stack([x, y, c], axis=1), ref[y, x, c], got[y, x, c], worst)
