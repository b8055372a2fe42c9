"""cpu-fast's drawing path for a paint without anti-aliasing, outlines or snow
(fast_drawing._fill_tile): a batch of mostly 9-32 px circles finds each row's run from the row
before's; the pictures must be the same bits either way, and the reference's (-r cpu)."""
import numpy as np
import pytest

import circle_render
from circle_render.cpu import fast

OPTIONS = {
    "per-circle alpha": {"alpha": "array"},
    "alpha 0 and 1": {"alpha": "zeros-ones"},
    "transparent": {"alpha": "array", "background": "transparent"},
    "antialias": {"alpha": "array", "antialias": True},
    "outline": {"alpha": "array", "edge_width": 0.002},
    "snow": {"shading": "snow"},
}


def scene(size, seed=3):
    """Circles of 6-40 px across on a size x size picture, some past its edges."""
    rng = np.random.default_rng(seed)
    n = 3000
    pos = np.c_[rng.uniform(-0.05, 1.05, (n, 2)), rng.uniform(0, 1, n)]
    rad = rng.uniform(3, 20, n) / size
    col = rng.uniform(0, 1, (n, 3))
    return rng, pos, rad, col


def options(rng, n, given):
    out = dict(given)
    if out.get("alpha") == "array":
        out["alpha"] = rng.uniform(0, 1, n)
    elif out.get("alpha") == "zeros-ones":
        out["alpha"] = np.where(rng.random(n) < 0.5, 0.0, 1.0)
    return out


@pytest.mark.parametrize("name", list(OPTIONS))
@pytest.mark.parametrize("width, height", [(256, 256), (200, 133), (97, 160)])
def test_both_ways_draw_the_references_bits(name, width, height, monkeypatch):
    rng, pos, rad, col = scene(max(width, height))
    opts = options(rng, len(rad), OPTIONS[name])
    pictures = []
    for following in (True, False):
        monkeypatch.setattr(fast, "mostly_mid_sized", lambda radius, scale, f=following: f)
        pictures.append(circle_render.render(pos, rad, col, width, height, "cpu-fast", **opts))
    ref = circle_render.render(pos, rad, col, width, height, "cpu", **opts)
    assert pictures[0].tobytes() == pictures[1].tobytes() == ref.tobytes()


def test_frames_of_a_moving_drawing_both_ways(monkeypatch):
    """Frame after frame in one renderer (the painted spans each frame clears come from the
    rows either way found)."""
    rng, pos, rad, col = scene(300)
    alpha = rng.uniform(0, 1, len(rad))
    frames = {}
    for following in (True, False):
        monkeypatch.setattr(fast, "mostly_mid_sized", lambda radius, scale, f=following: f)
        canvas = circle_render.Canvas(300, 300, "cpu-fast", background="transparent")
        canvas.set(pos, rad, col, alpha=alpha)
        out = []
        for step in range(3):
            canvas.update(positions=pos + 0.01 * step).render()
            out.append(canvas.to_numpy().tobytes())
        frames[following] = out
    assert frames[True] == frames[False]
