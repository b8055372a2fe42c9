"""python -m circle_render.golden.make rewrites a golden picture only when its pixels change."""
import numpy as np

from circle_render.golden.make import write_if_changed
from circle_render.io.images import read_image


def test_a_golden_picture_is_rewritten_only_when_its_pixels_change(tmp_path):
    path = tmp_path / "scene.png"
    pixels = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)
    assert write_if_changed(path, pixels)
    before = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    assert not write_if_changed(path, pixels.copy())
    assert path.stat().st_mtime_ns == stamp and path.read_bytes() == before
    changed = pixels.copy()
    changed[0, 0, 0] ^= 1
    assert write_if_changed(path, changed)
    assert np.array_equal(read_image(path), changed)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.png"]     # no temporary left
