"""Anti-aliasing against pycairo's (docs/drawing.md, "Against pycairo"): within 0.1 at every
pixel on random scenes of circles of 0.5-50 px. Skipped where pycairo is not installed; the
drawing code is the benchmarks' (benchmarks/cpu_peers.py), so both compare the same thing."""
import sys

import numpy as np
import pytest
from helpers import ROOT

import circle_render
from circle_render.drawing import Drawing
from circle_render.scenes import Scene

pytest.importorskip("cairo")
sys.path.insert(0, str(ROOT / "benchmarks"))
import cpu_peers

SIZE = 160


def random_circles(seed: int, alphas: str, n: int = 250) -> Scene:
    rng = np.random.default_rng(seed)
    radius = np.exp(rng.uniform(np.log(0.5), np.log(50), n)) / SIZE           # 0.5 to 50 pixels
    alpha = np.full(n, 0.5) if alphas == "half" else rng.uniform(0, 1, n)
    s = Scene("random", np.c_[rng.uniform(0, 1, (n, 2)), np.zeros(n)], radius, rng.uniform(0, 1, (n, 3)))
    s.drawing = Drawing(np.ascontiguousarray(np.c_[s.color, alpha], dtype=np.float32), antialias=True)
    return s


def ours(s: Scene) -> np.ndarray:
    img = circle_render.render(s.position[:, :2], s.radius, s.drawing.rgba, SIZE, SIZE, "cpu", antialias=True)
    return circle_render.to_bytes(img)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alphas", ["half", "per-circle"])
def test_antialiasing_is_within_0_1_of_pycairo_at_every_pixel(seed, alphas):
    s = random_circles(seed, alphas)
    mine, cairo = ours(s).astype(int), cpu_peers.pycairo(s, SIZE).astype(int)
    assert np.abs(mine - cairo).max() <= 0.1 * 255
    aliased = circle_render.render(s.position[:, :2], s.radius, s.drawing.rgba, SIZE, SIZE, "cpu")
    assert np.abs(circle_render.to_bytes(aliased).astype(int) - cairo).max() > 0.1 * 255   # the test can fail


def test_cairo_without_its_curve_tolerance_is_closer_still():
    """pycairo flattens arcs within 0.1 px by default; at 0.01 px it is within 0.06 of ours."""
    s = random_circles(4, "per-circle")
    old, cpu_peers.CAIRO_TOLERANCE = cpu_peers.CAIRO_TOLERANCE, 0.01
    try:
        cairo = cpu_peers.pycairo(s, SIZE).astype(int)
    finally:
        cpu_peers.CAIRO_TOLERANCE = old
    assert np.abs(ours(s).astype(int) - cairo).max() <= 0.06 * 255
