"""The CUDA renderers' pictures against the reference, and the fast renderer's paths and
options (skipped without a GPU); kernels against their twins: tests/cuda/test_kernel_twins.py."""
import numpy as np
import pytest

from circle_render.course import compare
from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import clear_image
from circle_render.scenes import SCENE_NAMES, make_scene

pytestmark = pytest.mark.gpu

CUDA_RENDERERS = ["cuda", "cuda-tiled"]
HEAVY = {"rand100k", "rand1M", "micro2M", "biglittle", "littlebig", "snowsingle"}


def _gpu(name, scene, size):
    from circle_render import registry
    r = registry.create(name)
    r.load(scene, size, size)
    return r


def _rows_for(size):
    """Full image for small sizes; three 48-row bands (bottom, middle, top) for large ones."""
    if size <= 517:
        return [None]
    mid = size // 2 - 24
    return [(0, 48), (mid, mid + 48), (size - 48, size)]


@pytest.mark.parametrize("renderer", CUDA_RENDERERS)
@pytest.mark.parametrize("scene", SCENE_NAMES)
@pytest.mark.parametrize("size,seed", [(1024, 0), (517, 7), (64, 0), (64, 7), (2048, 0)])
def test_render_matches_reference(renderer, scene, size, seed):
    if size == 2048 and scene in HEAVY:
        pytest.skip("2048 for heavy scenes runs in benchmarks/gpu_check.py")
    s = make_scene(scene, seed)
    r = _gpu(renderer, s, size)
    r.clear()
    r.advance()
    r.render()
    img = r.get_image()
    for rows in _rows_for(size):
        ref = reference_image(s, size, size, rows=rows)
        got = img if rows is None else img[rows[0]:rows[1]]
        result = compare(ref, got)
        assert result.passed, f"{result.count} mismatches in rows {rows}"
        assert result.max_abs_diff < 1e-3


# ---- the fast renderer's stages ----

def _fast(scene, size, **options):
    from circle_render.cuda.fast import FastCudaRenderer
    r = FastCudaRenderer(**options)
    r.load(scene, size, size)
    return r


@pytest.mark.parametrize("scene,size", [("rgb", 16384), ("micro2M", 8192), ("rand1M", 16384),
                                        ("rand10k", 4096), ("pattern", 4096)])
def test_fast_renderer_draws_the_largest_images(scene, size):
    # list entries pack tile boxes relative to their supertile, and the sparse path counts with
    # global atomics past 2048 pixels: every size the command line accepts. rand10k and pattern
    # at 4096 have outgrown the walk (fast.walk_outgrown): binned with few circles
    s = make_scene(scene)
    r = _fast(s, size)
    r.clear(); r.advance(); r.render(); r.synchronize()
    for lo, hi in [(0, 16), (size // 2 - 8, size // 2 + 8), (size - 16, size)]:
        want = reference_image(make_scene(scene), size, size, rows=(lo, hi), steps=1)
        result = compare(want, r.image.pixels[lo:hi].get())
        assert result.passed and result.max_abs_diff < 1e-3, (lo, hi)


@pytest.mark.parametrize("scene,options", [("rand100k", {"capacity": 1000}),    # lists overflow
                                           ("rand100k", {"binned": False}),
                                           ("rgby", {"binned": True}),
                                           ("hypnosis", {"binned": True}),
                                           ("fireworks", {"sparse": True}),
                                           ("hypnosis", {"sparse": True}),   # outgrows capacity
                                           ("rand10k", {"sparse": True}),    # deep pixels, long lists
                                           ("snow", {"sparse": True}),       # some tiles do
                                           ("rand100k", {"sparse": True, "capacity": 1000})])
def test_fast_paths_match_reference(scene, options):
    s = make_scene(scene)
    r = _fast(s, 256, **options)
    for _ in range(3):                  # hypnosis outgrows its load-time capacity
        r.clear(); r.advance(); r.render()
    result = compare(reference_image(make_scene(scene), 256, 256, steps=3), r.get_image())
    assert result.passed and result.max_abs_diff < 1e-3


@pytest.mark.parametrize("scene,tuning", [
    ("rand10k", {"CULL_ITEMS": 1}),
    ("rand10k", {"CULL_ITEMS": 4, "FAST_TILE": 32}),
    ("biglittle", {"CULL_ITEMS": 4}),
    ("snow", {"CULL_ITEMS": 4, "FAST_TILE": 32}),
    ("biglittle", {"FAST_TILE": 16})])
def test_cull_step_sizes_match_reference(scene, tuning):
    s = make_scene(scene)
    r = _fast(s, 256, tuning=tuning)
    r.clear(); r.advance(); r.render()
    result = compare(reference_image(make_scene(scene), 256, 256, steps=1), r.get_image())
    assert result.passed and result.max_abs_diff < 1e-3


def test_a_walk_where_every_entry_is_a_hit_keeps_circle_order():
    # One 32x32 tile, every circle of rand10k shrunk to under a pixel: each one reaches the
    # tile (its centre is inside) and is staged, few cover a pixel centre, so no pixel ever
    # saturates and the walk blends all 10,000 in order.
    s = make_scene("rand10k")
    s.radius *= 0.05
    r = _fast(s, 32, tuning={"FAST_TILE": 32, "CULL_ITEMS": 3})
    r.clear(); r.render()
    want = reference_image(s, 32, 32)
    assert (want != clear_image(32, 32, s.shading)).any()     # some circles do cover pixels
    assert np.abs(r.get_image()[..., :3] - want[..., :3]).max() < 1e-5


@pytest.mark.parametrize("options", [{}, {"sparse": True}])
def test_alpha_counts_every_circle_blended(options):
    # the flat walk derives alpha from T = 2^-k; no pixel of rgby reaches T_EPS
    s = make_scene("rgby")
    r = _fast(s, 64, **options)
    r.clear(); r.render()
    assert np.array_equal(r.get_image()[..., 3], reference_image(s, 64, 64)[..., 3])


def test_sparse_path_is_serial_order():
    s = make_scene("fireworks")
    r = _fast(s, 256, sparse=True)
    r.clear(); r.advance(); r.render()
    assert np.abs(r.get_image() - reference_image(make_scene("fireworks"), 256, 256, steps=1)).max() < 1e-6


def test_render_without_clear_blends_over_the_image():
    s = make_scene("rgb")
    r = _fast(s, 64)
    r.clear(); r.render(); r.render()
    twice = s.copy()
    twice.position = np.concatenate([s.position, s.position])
    twice.radius = np.concatenate([s.radius, s.radius])
    twice.color = np.concatenate([s.color, s.color])
    twice.velocity = np.concatenate([s.velocity, s.velocity])
    result = compare(reference_image(twice, 64, 64), r.get_image())
    assert result.passed and result.max_abs_diff < 1e-5


@pytest.mark.parametrize("renderer", CUDA_RENDERERS)
@pytest.mark.parametrize("frame", [240, 600])
@pytest.mark.parametrize("size", [256, 517])
def test_snow_at_later_frames_passes_the_check(renderer, frame, size):
    # the GPU step equals the CPU step bit for bit, so any frame draws the same flakes
    from circle_render.timing.frames import run_frames
    r = _gpu(renderer, make_scene("snow"), size)
    run_frames(r, frame, frame + 1)
    result = compare(reference_image(make_scene("snow"), size, size, steps=frame + 1), r.get_image())
    assert result.passed and result.max_abs_diff < 1e-3
