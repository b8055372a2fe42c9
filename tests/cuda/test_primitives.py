"""SAXPY, exclusive scan and find_repeats against their NumPy twins (GPU tests are marked)."""
import numpy as np
import pytest
from helpers import render

from circle_render.constants import SCAN_ITEMS, SCAN_THREADS
from circle_render.twins.saxpy import saxpy_f32
from circle_render.twins.scan import exclusive_scan_i32, find_repeats_i32

TILE = SCAN_THREADS * SCAN_ITEMS
LENGTHS = sorted({0, 1, 2, 3, 4, 5, 15, 16, 17, 255, 256, 257, TILE - 1, TILE, TILE + 1,
                  2 * TILE + 3, 2**16 - 1, 2**16, 2**16 + 1, 2**20 - 1, 2**20, 2**20 + 1, 10**6 + 3})


def inputs(n, kind, seed=0):
    if kind == "ones":
        return np.ones(n, np.int32)
    return np.random.default_rng(seed + n).integers(0, 10, n, dtype=np.int32)


def test_references_match_a_plain_loop():
    x = inputs(1000, "random")
    want, run = [], 0
    for v in x.tolist():
        want.append(run)
        run += v
    assert exclusive_scan_i32(x).tolist() == want
    assert find_repeats_i32(x).tolist() == [i for i in range(999) if x[i] == x[i + 1]]
    assert exclusive_scan_i32(np.zeros(0, np.int32)).tolist() == []
    assert find_repeats_i32(np.ones(1, np.int32)).tolist() == []


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["random", "ones"])
def test_exclusive_scan_every_length(kind):
    import cupy as cp

    from circle_render.cuda.primitives import exclusive_scan
    for n in LENGTHS:
        x = inputs(n, kind)
        got = cp.asnumpy(exclusive_scan(cp.asarray(x)))
        assert got.dtype == np.int32 and np.array_equal(got, exclusive_scan_i32(x)), n


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["random", "ones"])
def test_find_repeats_every_length(kind):
    import cupy as cp

    from circle_render.cuda.primitives import find_repeats
    for n in LENGTHS:
        x = inputs(n, kind)
        idx, count = find_repeats(cp.asarray(x))
        want = find_repeats_i32(x)
        assert count == want.size and np.array_equal(cp.asnumpy(idx), want), n


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["random", "ones"])
def test_40M_elements_and_int32_wrap(kind):
    import cupy as cp

    from circle_render.cuda.primitives import exclusive_scan, find_repeats
    n = 40_000_000
    x = inputs(n, kind)
    assert np.array_equal(cp.asnumpy(exclusive_scan(cp.asarray(x))), exclusive_scan_i32(x))
    idx, _ = find_repeats(cp.asarray(x))
    assert np.array_equal(cp.asnumpy(idx), find_repeats_i32(x))
    big = np.full(5000, 2**30, np.int32)               # sums pass 2^31: wrap like int32
    assert np.array_equal(cp.asnumpy(exclusive_scan(cp.asarray(big))), exclusive_scan_i32(big))


@pytest.mark.gpu
def test_unaligned_views_and_wrong_types():
    import cupy as cp

    from circle_render.cuda.primitives import exclusive_scan, find_repeats, saxpy
    x = inputs(10_001, "random")
    dx = cp.asarray(x)
    assert np.array_equal(cp.asnumpy(exclusive_scan(dx[1:])), exclusive_scan_i32(x[1:]))
    assert np.array_equal(cp.asnumpy(find_repeats(dx[3:])[0]), find_repeats_i32(x[3:]))
    assert np.array_equal(cp.asnumpy(exclusive_scan(dx[::2])), exclusive_scan_i32(x[::2]))
    with pytest.raises(TypeError, match="int32"):
        exclusive_scan(dx.astype(cp.int64))
    with pytest.raises(ValueError, match="differ in length"):
        saxpy(1.0, cp.zeros(4, cp.float32), cp.zeros(5, cp.float32))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 4096 * 7 + 3, 10**7 + 1])
def test_saxpy_is_exact_float32(n):
    import cupy as cp

    from circle_render.cuda.primitives import saxpy
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    got = cp.asnumpy(saxpy(1.7, cp.asarray(x), cp.asarray(y)))
    assert np.array_equal(got, saxpy_f32(1.7, x, y))


@pytest.mark.gpu
def test_scan_cli_and_check_table():
    p = render("scan", "-n", "1000003", "-i", "ones")
    assert p.returncode == 0 and "Scan outputs are correct!" in p.stdout and "GPU_time:" in p.stdout
    p = render("scan", "-m", "find_repeats", "-n", "100000")
    assert p.returncode == 0 and "Find_repeats outputs are correct!" in p.stdout
    p = render("check", "find_repeats", "--rules", "cmu")
    assert p.returncode == 0, p.stderr
    assert "| 2000000         | 0.593" in p.stdout and "Total score:" in p.stdout


@pytest.mark.parametrize("args", [["saxpy", "-n", "10"], ["scan", "-n", "10"]])
def test_without_gpu_is_one_line_exit_2(args):
    from circle_render.gpu import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    p = render(*args)
    assert p.returncode == 2 and "needs a CUDA GPU" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.gpu
def test_back_to_back_calls_reuse_state_and_epoch_wraps():
    import cupy as cp

    from circle_render.cuda import primitives
    from circle_render.cuda.primitives import exclusive_scan, find_repeats
    xs = [inputs(n, "random", seed=k) for k, n in enumerate([3 * TILE + 5, TILE, 10 * TILE + 1, 7, 2 * TILE])]
    for round_ in range(3):
        if round_ == 2:                                   # force the epoch to wrap
            primitives._scan_state().epoch = primitives._ScanState.MAX_EPOCH - 1
        for x in xs:
            assert np.array_equal(cp.asnumpy(exclusive_scan(cp.asarray(x))), exclusive_scan_i32(x))
            assert np.array_equal(cp.asnumpy(find_repeats(cp.asarray(x))[0]), find_repeats_i32(x))


def test_cub_has_no_find_repeats():
    p = render("scan", "--cub", "-m", "find_repeats")
    assert p.returncode == 2 and "--cub times CuPy's scan" in p.stderr and len(p.stderr.strip().splitlines()) == 1
