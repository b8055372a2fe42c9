"""The course-compatible scan's index logic without a GPU (kernels/course_compat.cuh,
sharedMemExclusiveScan): a NumPy model of what each thread of a block does, lane by lane and
warp by warp, for every block shape the handout promises; the GPU runs the same cases
(tests/test_course_compat_gpu.py)."""
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


def warp_inclusive(values, lanes):
    """courseWarpWindowScan (and courseWarpInclusiveScan): 5 doubling steps; a lane adds the value
    `step` lanes below it (a zero below lane 0)."""
    v = values.copy()
    for step in (1, 2, 4, 8, 16):
        up = np.array([v[i - step] if lanes[i] >= step else 0 for i in range(len(v))], dtype=v.dtype)
        v = v + np.where(lanes >= step, up, 0).astype(v.dtype)
    return v


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
    first = np.arange(32)
    totals = warp_inclusive(np.where(first < warps, scratch[:32], 0).astype(s_input.dtype), first)
    # barrier 2 before this
    exclusive_totals = totals[:warps] - scratch[:warps]           # the first warp's exclusive scan
    out[t] = exclusive_totals[warp] + inclusive - mine            # after barrier 3
    return out


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
