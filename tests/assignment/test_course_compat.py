"""The course-compatible scan's index logic without a GPU (kernels/course_compat.cuh,
sharedMemExclusiveScan): a NumPy model of what each thread of a block does, lane by lane and
warp by warp, for every block shape the handout promises; the GPU runs the same cases
(tests/assignment/test_course_compat_gpu.py)."""
import re

import numpy as np
import pytest
from test_course_compat_gpu import SHAPES

from circle_render.cuda.module import KERNEL_DIR


def linear_index(block):
    """Each thread's linear index, x fastest (threadIdx.x + blockDim.x * (y + blockDim.y * z))."""
    bx, by, bz = (*block, 1, 1)[:3]
    z, y, x = np.meshgrid(np.arange(bz), np.arange(by), np.arange(bx), indexing="ij")
    return (x + bx * (y + by * z)).ravel()


def window_inclusive(values, width):
    """courseWindowScan: lanes 0 .. width - 1 write 0 at window[lane] and their value at
    window[lane + width]; then, while step < width, each adds window[lane + width - step] (read by
    every lane before any writes: __syncwarp between). Returns window[lane + width]."""
    window = np.concatenate([np.zeros(width, dtype=values.dtype), values[:width]])
    step = 1
    while step < width:
        add = window[np.arange(width) + width - step].copy()       # all reads, then __syncwarp
        window[width:] = window[width:] + add                        # all writes, then __syncwarp
        step <<= 1
    return window[width:]


def warp_inclusive(values, lanes):
    """courseWarpWindowScan (and courseWarpInclusiveScan): a whole warp, 5 doubling steps; lanes
    in order 0 .. len(values) - 1."""
    assert np.array_equal(lanes, np.arange(len(values)))
    return window_inclusive(values, 32) if len(values) == 32 else window_inclusive(values, len(values))


def model_scan(block, s_input):
    """What the fast path writes to sOutput, thread by thread (size = the block's threads)."""
    t = linear_index(block)
    size = len(t)
    lane, warp = t & 31, t >> 5
    mine = s_input[t]
    inclusive = np.empty_like(mine)
    for w in np.unique(warp):                        # each warp on its own, in its lanes' order
        sel = np.nonzero(warp == w)[0]
        sel = sel[np.argsort(lane[sel])]
        inclusive[sel] = warp_inclusive(mine[sel], lane[sel])
    out = np.zeros(size, dtype=s_input.dtype)
    if size <= 32:
        out[t] = inclusive - mine
        return out
    scratch = np.zeros(2 * size, dtype=s_input.dtype)
    scratch[warp[lane == 31]] = inclusive[lane == 31]            # after barrier 1
    warps = size >> 5
    # after barrier 2: the first `warps` threads scan the totals, log2(warps) steps, as the course's
    totals = window_inclusive(scratch[:warps].copy(), warps)
    scratch[:warps] = totals - scratch[:warps]                   # exclusive
    out[t] = scratch[warp] + inclusive - mine                    # after barrier 3
    return out


def test_the_second_level_scans_only_the_warp_totals():
    """The first size / 32 threads scan the size / 32 warp totals (3 doubling steps at 256, as the
    course's; a scan of all 32 lanes, 5 steps, made a 16 x 16 port slower than its original)."""
    header = (KERNEL_DIR / "course_compat.cuh").read_text()
    fast = header[header.index("__device__ __inline__ void sharedMemExclusiveScan("):]
    fast = fast[fast.index("if (size != blockDim.x"):]
    assert "if (threadIndex < warps)" in fast and "courseWindowScan(total, sScratch + 64, lane, warps, mask)" in fast
    v = np.arange(1, 9, dtype=np.uint32)
    assert np.array_equal(window_inclusive(v, 8), np.cumsum(v))      # 3 steps suffice for 8 values


@pytest.mark.parametrize("block", SHAPES, ids=["x".join(map(str, b)) for b in SHAPES])
def test_the_scan_model_is_an_exclusive_scan_for_every_promised_shape(block):
    size = int(np.prod(block))
    rng = np.random.default_rng(size)
    for v in (rng.integers(0, 2, size), np.ones(size), rng.integers(0, 1 << 20, size)):
        v = v.astype(np.uint32)
        assert np.array_equal(model_scan(block, v), np.cumsum(v, dtype=np.uint32) - v)


def test_the_fast_path_has_the_courses_three_block_barriers():
    """Above one warp: 3 __syncthreads (the course's count, facts file); one warp: none."""
    header = (KERNEL_DIR / "course_compat.cuh").read_text()
    fast = header[header.index("__device__ __inline__ void sharedMemExclusiveScan("):]
    one_warp = fast[fast.index("if (size <= 32) {"):fast.index("if (size != blockDim.x")]
    assert len(re.findall(r"__syncthreads\(\)", fast)) == 3
    assert "__syncthreads" not in one_warp and "__syncwarp" in one_warp
