import numpy as np

from circle_render.course import compare


def _pair():
    ref = np.zeros((8, 8, 4), np.float32)
    return ref, ref.copy()


def test_five_mismatches_pass_six_fail():
    ref, got = _pair()
    got.reshape(-1, 4)[:5, 0] = 0.5
    assert compare(ref, got).passed and compare(ref, got).count == 5
    got.reshape(-1, 4)[5, 1] = 0.5
    assert not compare(ref, got).passed


def test_tolerance_edge_and_alpha_ignored():
    ref, got = _pair()
    got[..., 0] = np.float32(0.1)       # exactly 0.1 away is not a mismatch
    got[..., 3] = 100                   # alpha never compared
    r = compare(ref, got)
    assert r.count == 0 and abs(r.max_abs_diff - 0.1) < 1e-7


def test_non_finite_is_a_mismatch_with_position():
    ref, got = _pair()
    got[2, 3, 1] = np.nan
    r = compare(ref, got)
    assert r.count == 1 and r.mismatches.tolist() == [[3, 2, 1]]
