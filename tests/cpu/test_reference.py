import numpy as np
import pytest

from circle_render.constants import FLAT_ALPHA
from circle_render.cpu import reference_boxes as R
from circle_render.cpu.reference import CpuRenderer, reference_image
from circle_render.cpu.shading import clear_image, snow_alpha_color, to_bytes
from circle_render.golden.make import GOLDEN_SIZE, golden_cases, golden_path
from circle_render.io.images import read_image
from circle_render.scenes import make_scene

f32 = np.float32


@pytest.mark.parametrize("name,frame", golden_cases())
def test_golden_images_reproduced_exactly(name, frame):
    img = reference_image(make_scene(name, 0), GOLDEN_SIZE, GOLDEN_SIZE, steps=frame + 1)
    assert np.array_equal(to_bytes(img), read_image(golden_path(name, frame)))


@pytest.mark.parametrize("name,size", [("rand10k", 96), ("snowsingle", 64), ("pattern", 77)])
def test_box_and_pair_paths_are_bit_identical(name, size, monkeypatch):
    s = make_scene(name)
    out = []
    for threshold in (-1, 10**9):          # everything by boxes, then everything by pairs
        monkeypatch.setattr(R, "SMALL_BOX_AREA", threshold)
        out.append(reference_image(s, size, size))
    assert np.array_equal(out[0], out[1])


def test_row_bands_equal_the_full_image():
    s = make_scene("rand10k")
    full = reference_image(s, 120, 120)
    assert np.array_equal(full[33:70], reference_image(s, 120, 120, rows=(33, 70)))


def test_threads_do_not_change_the_result():
    s = make_scene("rand10k")
    images = []
    for threads in (1, 3):
        r = CpuRenderer(threads=threads)
        r.load(s, 100, 100)
        r.clear(); r.advance(); r.render()
        images.append(r.get_image())
    assert np.array_equal(*images)


def test_single_circle_serial_blend_by_hand():
    s = make_scene("rgb")
    img = reference_image(s, 10, 10)
    # pixel (5, 5) is under all three circles: blend red, green, blue over white in order
    p = np.ones(3, dtype=np.float32)
    for c in s.color:
        p = FLAT_ALPHA * c + (f32(1) - FLAT_ALPHA) * p
    assert np.array_equal(img[5, 5, :3], p)
    assert img[5, 5, 3] == f32(1) + 3 * FLAT_ALPHA


def test_snow_clear_gradient_and_shading():
    img = clear_image(4, 100, "snow")
    assert img[0, 0, 0] == f32(0.4) + f32(0.45) * f32(100) / f32(100)   # bottom row is lightest
    assert img[99, 0, 0] < img[0, 0, 0]
    alpha, color = snow_alpha_color(np.array([0.0], np.float32), f32(0.1), f32(0.0))
    assert alpha[0] == f32(0.5) and color[0][0] == 1      # centre: full max alpha, white
    alpha, _ = snow_alpha_color(np.array([0.01], np.float32), f32(0.1), f32(0.0))
    assert alpha[0] == pytest.approx(0.5 * np.exp(-4), rel=1e-6)


def test_to_bytes_truncates_and_flips():
    img = np.zeros((2, 1, 4), np.float32)
    img[0, 0, :3] = [1.0, 0.999, 2.0]     # bottom row
    img[1, 0, :3] = [-1.0, 0.5, np.float32(1 / 255)]
    b = to_bytes(img)
    assert b[1, 0].tolist() == [255, 254, 255]   # bottom row written last
    assert b[0, 0].tolist() == [0, 127, 1]


def test_plan_merges_short_runs_where_sizes_straddle_the_threshold():
    # rand1M at 517: box areas straddle SMALL_BOX_AREA, so raw runs are a few circles long
    from circle_render.cpu.reference import _plan
    from circle_render.cpu.reference_boxes import MIN_RUN, PAIR_MAX_AREA, SMALL_BOX_AREA
    s = make_scene("rand1M")
    _, area, small, runs = _plan(s, 517, 517)
    raw = np.count_nonzero(np.diff((area <= SMALL_BOX_AREA).astype(np.int8))) + 1
    assert raw > 100_000 and len(runs) < raw // 1000
    assert all(r.size >= MIN_RUN for r in runs)
    assert area[small].max() <= PAIR_MAX_AREA
    assert np.array_equal(np.concatenate(runs), np.arange(s.n))
