"""cpu/fast_blend.py's vector blend of a run of RGBA pixels: the same bits as the scalar
loops it replaced (one float32 multiply, then one add, per channel), for every run length and
start, and no float outside the run read into the result or written."""
import numba
import numpy as np
import pytest

from circle_render.cpu.fast_blend import blend_pixels

f32 = np.float32


@numba.njit
def _blend(row, start, count, add, scale):
    blend_pixels(row, start, count, add, scale)


def scalar(row, start, count, add, scale):
    out = row.copy()
    for p in range(max(count, 0)):
        for c in range(4):
            j = start + 4 * p + c
            out[j] = f32(add[c] + f32(scale[c] * out[j]))
    return out


@pytest.mark.parametrize("kind", ["drawing", "course"])
def test_every_run_is_the_scalar_loops_bits_and_nothing_beside_it_changes(kind):
    rng = np.random.default_rng(5)
    alpha = f32(rng.uniform(0, 1))
    keep = f32(1) - alpha
    colour = rng.uniform(-0.1, 1.1, 3).astype(f32)
    if kind == "drawing":                 # fast_drawing._blend_run: P <- a*c + (1-a)*P, A <- a + (1-a)*A
        add = tuple(f32(v) for v in (alpha * colour[0], alpha * colour[1], alpha * colour[2], alpha))
        scale = (keep, keep, keep, keep)
    else:                                 # fast_kernels._blend_flat: c <- 0.5*colour + 0.5*c, A <- A + 0.5
        add = tuple(f32(v) for v in (0.5 * colour[0], 0.5 * colour[1], 0.5 * colour[2], 0.5))
        scale = (f32(0.5), f32(0.5), f32(0.5), f32(1))
    for first in range(5):                          # pixels before the run: every alignment of a vector
        for count in range(-2, 41):
            row = rng.uniform(-0.5, 3, 4 * 48).astype(f32)
            row[rng.random(row.size) < 0.05] = np.nan          # beside the run: must stay as they are
            want = scalar(row, 4 * first, count, add, scale)
            got = row.copy()
            _blend(got, 4 * first, count, add, scale)
            assert got.tobytes() == want.tobytes(), (first, count)
