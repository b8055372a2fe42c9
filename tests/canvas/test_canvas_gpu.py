"""The Canvas on the GPU: CUDA arrays read in place (never copied to the host), frames moved
in place, radii planned again, every bad argument the host's error, the picture out on the
GPU (CuPy, DLPack, the CUDA array interface). CPU tests: test_canvas.py."""
import os

import numpy as np
import pytest

import circle_render
from circle_render.canvas import ArgumentError, Canvas

pytestmark = pytest.mark.gpu
TOLERANCE = {"cuda": 2e-3, "cuda-tiled": 0.0}     # cuda stops blending a pixel at T < T_EPS (docs/fast-renderer.md)


@pytest.fixture(scope="module")
def cp():
    import cupy
    return cupy


def circles(seed, n, small=False):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0, 1, (n, 2)).astype(np.float32)
    rad = (rng.uniform(0.0005, 0.002, n) if small else rng.uniform(0.005, 0.05, n)).astype(np.float32)
    col = rng.uniform(0, 1, (n, 3)).astype(np.float32)
    return pos, rad, col


@pytest.mark.parametrize("renderer", ["cuda", "cuda-tiled"])
@pytest.mark.parametrize("n,small,size", [(3000, False, (256, 256)), (40_000, False, (512, 512)),
                                          (60_000, True, (512, 512))])
def test_a_gpu_canvas_draws_what_the_cpu_draws(renderer, n, small, size):
    """The walk, binned and sparse paths of the course's picture, drawn on the GPU."""
    pos, rad, col = circles(1, n, small)
    canvas = Canvas(*size, renderer).set(pos, rad, col)
    assert canvas.on_gpu and canvas.renderer == renderer
    want = circle_render.render(pos, rad, col, *size, "cpu-fast")
    got = canvas.render().to_numpy()
    assert got.shape == want.shape and np.abs(got - want).max() <= TOLERANCE[renderer]
    assert (got[..., 3] == 1).all()
    upper = canvas.to_numpy(np.uint8, "upper")
    assert np.array_equal(upper, canvas.to_cupy(np.uint8, "upper").get())
    assert np.array_equal(upper, (np.clip(got[::-1], 0, 1) * np.float32(255)).astype(np.uint8))


@pytest.mark.parametrize("renderer", ["cuda", "cuda-tiled"])
def test_drawings_are_loaded_from_the_host_and_each_frame_is_renders_picture(cp, renderer):
    """A drawing on a CUDA renderer (a non-square picture, an alpha, outlines: its drawing path,
    as render() takes it) is loaded from host arrays (CUDA arrays copied once); each frame moved
    is the picture of a canvas made afresh, whether the renderer took the positions in place
    (cuda-tiled) or was loaded again (cuda, whose drawn path bins boxes made at load)."""
    pos, rad, col = circles(11, 3000)
    for size, options in (((300, 200), {}), ((256, 256), {"alpha": 0.3}), ((256, 256), {"edge_width": 0.005})):
        canvas = Canvas(*size, renderer).set(cp.asarray(pos), cp.asarray(rad), cp.asarray(col), **options)
        assert not canvas.on_gpu and canvas.renderer == renderer
        moved = pos.copy()
        for _ in range(3):
            moved += np.float32(0.02)
            canvas.update(positions=cp.asarray(moved)).render()
            fresh = Canvas(*size, renderer).set(moved, rad, col, **options).to_numpy()
            assert np.array_equal(canvas.to_numpy(), fresh), (size, options)


@pytest.mark.parametrize("renderer", ["cuda", "cuda-tiled"])
def test_cuda_arrays_draw_what_host_arrays_draw(cp, renderer):
    pos, rad, col = circles(2, 20_000)
    want = Canvas(512, 512, renderer).set(pos, rad, col).to_numpy()
    for convert in (cp.asarray, lambda a: cp.asarray(a, dtype=cp.float64)):
        got = Canvas(512, 512, renderer).set(convert(pos), convert(rad), convert(col)).to_numpy()
        assert np.array_equal(got, want)
    px = Canvas(512, 512, renderer, units="pixels").set(cp.asarray((pos * 512).astype(np.int32)), cp.asarray(rad * 512),
                                                        cp.asarray(col))
    assert np.array_equal(px.to_numpy(), circle_render.render((pos * 512).astype(np.int32), rad * 512, col, 512, 512,
                                                              renderer, units="pixels"))
    try:                                     # Numba's CUDA arrays: __cuda_array_interface__ alone
        from numba import cuda as numba_cuda
        on_numba = [numba_cuda.to_device(a) for a in (pos, rad, col)] if numba_cuda.is_available() else None
    except Exception:  # noqa: BLE001  (numba without its CUDA part: that form is not tried here)
        on_numba = None
    if on_numba is not None:
        assert not hasattr(type(on_numba[0]), "__dlpack__")
        assert np.array_equal(Canvas(512, 512, renderer).set(*on_numba).to_numpy(), want)
    torch = pytest.importorskip("torch")
    t = [torch.from_numpy(a).cuda() for a in (pos, rad, col)]
    assert np.array_equal(Canvas(512, 512, renderer).set(*t).to_numpy(), want)
    assert np.array_equal(circle_render.render(*t, 512, 512, renderer), want)


def test_jax_arrays_draw_what_host_arrays_draw():
    """JAX's GPU arrays (DLPack), read in place; JAX told not to take most of the GPU's memory."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("JAX sees no GPU here")
    pos, rad, col = circles(12, 5000)
    want = Canvas(256, 256, "cuda").set(pos, rad, col).to_numpy()
    on_jax = [jax.device_put(a, gpu) for a in (pos, rad, col)]
    assert np.array_equal(Canvas(256, 256, "cuda").set(*on_jax).to_numpy(), want)


@pytest.mark.parametrize("renderer", ["cuda", "cuda-tiled"])
@pytest.mark.parametrize("n,small", [(3000, False), (40_000, False), (60_000, True)])
def test_frames_moved_on_the_gpu_are_the_pictures_of_those_circles(cp, renderer, n, small):
    pos, rad, col = circles(3, n, small)
    p, r, c = cp.asarray(pos), cp.asarray(rad), cp.asarray(col)
    canvas = Canvas(512, 512, renderer).set(p, r, c)
    first = canvas._renderer
    rng = cp.random.default_rng(0)
    for k in range(4):
        p += rng.uniform(-0.01, 0.01, p.shape, dtype=cp.float32)          # moved in place, by the user
        update = {"positions": p} if k % 2 == 0 else {"positions": p, "colors": c[::-1].copy()}
        canvas.update(**update).render()
        fresh = Canvas(512, 512, renderer).set(p, r, update.get("colors", c)).to_numpy()
        assert np.array_equal(canvas.to_numpy(), fresh)
        if k % 2:
            c = c[::-1].copy()
    assert canvas._renderer is first                                     # the same renderer, in place


@pytest.mark.parametrize("renderer,n", [("cuda", 3000), ("cuda", 60_000), ("cuda-tiled", 3000)])
def test_moves_replayed_as_graphs_draw_those_circles_and_refuse_bad_values(cp, renderer, n):
    """update(positions=...) of an array seen before replays a captured graph (gpu_moves.py):
    every frame is still the picture of the circles given, whether the array is moved in
    place, two arrays alternate or a new array lands where an old one was; a bad value found
    by a replayed check is refused and the canvas keeps the circles before it."""
    from circle_render.canvas.gpu_moves import array_key
    pos, rad, col = circles(15, n, small=n == 60_000)
    p, q = cp.asarray(pos), cp.asarray(pos[::-1].copy())
    canvas = Canvas(256, 256, renderer).set(p, rad, col)
    rng = cp.random.default_rng(1)
    for k in range(8):
        arr = p if k % 3 else q
        arr += rng.uniform(-0.01, 0.01, arr.shape, dtype=cp.float32)
        if k == 5:
            arr = arr * np.float32(1.01)                                   # a new array each frame
        got = canvas.update(positions=arr).render().to_numpy()
        assert np.array_equal(got, Canvas(256, 256, renderer).set(arr.get(), rad, col).to_numpy())
    assert any(g is not None for seen in canvas._moves._seen.values() for g in seen.graphs)   # replayed
    good = p.copy()
    for _ in range(4):                                    # each staging buffer: launched, then captured
        canvas.update(positions=good).render()
    before = canvas.to_numpy()
    assert all(g is not None for g in canvas._moves._seen[array_key(good)].graphs)
    good[17, 1] = cp.nan
    canvas.update(positions=good).render()                                 # replayed: refused
    with pytest.raises(ValueError, match=r"positions must be finite, got 'nan' \(at positions\[17, 1\]\)"):
        canvas.synchronize()
    assert np.array_equal(canvas.to_numpy(), before)
    good[17, 1] = 0.25
    assert np.array_equal(canvas.update(positions=good).to_numpy(),
                          Canvas(256, 256, renderer).set(good.get(), rad, col).to_numpy())


def test_radii_are_planned_again_only_when_the_plan_changes(cp):
    pos, rad, col = circles(4, 40_000)
    r = cp.asarray(rad)
    canvas = Canvas(512, 512, "cuda").set(cp.asarray(pos), r, cp.asarray(col))
    path = canvas._renderer.path
    canvas.update(radii=r * 0.99).render()
    assert canvas._renderer.path is path                                  # shorter lists: it holds
    canvas.update(radii=r * 4).render()
    assert canvas._renderer.path is not path                              # planned again, lists a quarter longer
    want = Canvas(512, 512, "cuda").set(pos, rad * np.float32(4), col).to_numpy()
    assert np.abs(canvas.to_numpy() - want).max() <= TOLERANCE["cuda"]
    grown = canvas._renderer.plan
    canvas.update(radii=r * 4.1).render()                                 # within the room: not again
    assert canvas._renderer.plan is grown


def test_no_input_is_copied_to_the_host(cp, monkeypatch):
    """update(positions=...) with CUDA arrays: the only copy to the host is the checks' flags
    (12 bytes, to page-locked memory, read later: no cupy.ndarray.get) once a frame, counted
    at cupy.ndarray.get and, where PyTorch is there, by the CUDA profiler (CUPTI) over every
    copy the process makes."""
    pos, rad, col = circles(5, 100_000)
    p = cp.asarray(pos)
    canvas = Canvas(1024, 1024, "cuda").set(p, cp.asarray(rad), cp.asarray(col)).render()
    canvas.synchronize()
    sizes = []
    real_get = cp.ndarray.get
    monkeypatch.setattr(cp.ndarray, "get", lambda self, *a, **k: sizes.append(self.nbytes) or real_get(self, *a, **k))
    for _ in range(5):
        p += np.float32(0.001)
        canvas.update(positions=p).render()
    canvas.synchronize()
    assert sizes == []
    monkeypatch.undo()
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile
    t = torch.from_numpy(pos).cuda()
    canvas.update(positions=t).render()
    canvas.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            t += 0.001
            canvas.update(positions=t).render()
        canvas.synchronize()
    names = [e.name for e in prof.events()]
    if not any("canvas_positions" in name for name in names):
        pytest.skip("the CUDA profiler saw no kernel here (CUPTI unavailable)")
    assert sum("DtoH" in name for name in names) == 5, [name for name in names if "Memcpy" in name]


def test_bad_values_on_the_gpu_are_the_hosts_errors_and_change_nothing(cp):
    pos, rad, col = circles(6, 500)
    canvas = Canvas(64, 64, "cuda").set(cp.asarray(pos), cp.asarray(rad), cp.asarray(col)).render()
    before = canvas.to_numpy()
    bad_pos = pos.copy()
    bad_pos[7, 1] = np.nan
    bad_rad = rad.copy()
    bad_rad[3] = -1
    bad_col = np.c_[col, np.full(500, 0.5)]
    bad_col[9, 3] = 1.5
    for kwargs, message in (({"positions": bad_pos}, r"positions must be finite, got 'nan' \(at positions\[7, 1\]\)"),
                            ({"radii": bad_rad}, r"radii must be above 0, got -1.0 \(at radii\[3\]\)"),
                            ({"colors": bad_col}, r"colors alpha must be in \[0, 1\], got 1.5"),
                            ({"alpha": cp.full(500, 2.0)}, r"alpha must be in \[0, 1\], got 2.0"),
                            ({"positions": cp.zeros((3, 2))}, "positions has 3 rows but the canvas holds 500")):
        with pytest.raises(ValueError, match=message):          # positions: raised by the next call
            canvas.update(**{k: cp.asarray(v) for k, v in kwargs.items()}).synchronize()
        with pytest.raises(ValueError, match=message):            # the same error from host arrays
            canvas.update(**{k: v.get() if hasattr(v, "get") else v for k, v in kwargs.items()}).render().to_numpy()
        assert np.array_equal(canvas.to_numpy(), before)


def test_positions_checked_later_are_never_drawn(cp):
    """update(positions=...) on the GPU does not wait for its check: a bad value is refused by
    the next call on the canvas (update, set, synchronize, the picture), the frames drawn
    meanwhile show the circles before it, and the canvas keeps those circles."""
    pos, rad, col = circles(12, 40_000)
    p = cp.asarray(pos)
    canvas = Canvas(256, 256, "cuda").set(p, cp.asarray(rad), cp.asarray(col)).render()
    before = canvas.to_numpy()
    bad = p.copy()
    bad[123, 0] = cp.inf
    canvas.update(positions=bad).render()
    assert np.array_equal(canvas._renderer.path.scene.circles[:, :2].get(), pos)       # never taken
    with pytest.raises(ValueError, match=r"positions must be finite, got 'inf' \(at positions\[123, 0\]\)"):
        canvas.update(positions=p + np.float32(0.01))                      # this call is not made either
    assert np.array_equal(canvas.to_numpy(), before)
    canvas.update(positions=bad)
    bad[123, 0] = 0.5                                                      # changed before the next call
    with pytest.raises(ValueError, match=r"positions given to update\(\) had a bad value at index 123"):
        canvas.to_numpy()
    moved = p + np.float32(0.01)
    canvas.update(positions=moved)
    assert np.array_equal(canvas.to_numpy(), Canvas(256, 256, "cuda").set(moved, rad, col).to_numpy())


@pytest.mark.parametrize("n", [3000, 40_000, 60_000])
def test_the_first_frame_uncaptured_is_the_captured_frames_picture(n):
    """A canvas's first frame launches its kernels one by one, later ones replay graphs
    captured on the second: the same picture, and the course's load still captures."""
    from circle_render.cuda.fast import FastCudaRenderer
    canvas = Canvas(512, 512, "cuda").set(*circles(13, n, small=n == 60_000))
    first = canvas.render().to_numpy()
    assert not canvas._renderer._frames
    for _ in range(2):
        assert np.array_equal(canvas.render().to_numpy(), first)
    assert canvas._renderer._frames
    from circle_render.scenes import make_scene
    r = FastCudaRenderer()
    r.load(make_scene("rgb"), 64, 64)                                     # the course's timing: captured at load
    assert set(r._frames) == {True, False} and set(r._stages) == {True, False}


def test_large_pictures_cross_in_chunks(cp):
    """to_numpy copies a large picture through the page-locked lanes (canvas/transfer.py),
    chunk by chunk: the same bytes as CuPy's own copy, for a picture of several chunks and a
    partial last one (2100^2 x 16 bytes: 67 MB, and uint8: 17 MB)."""
    canvas = Canvas(2100, 2100, "cuda").set(*circles(14, 5000)).render()
    for dtype in (np.float32, np.uint8):
        assert np.array_equal(canvas.to_numpy(dtype, "upper"), canvas.to_cupy(dtype, "upper").get())


@pytest.mark.parametrize("lanes", [1, 3, 4])
def test_arrays_cross_through_the_lanes_whole(cp, monkeypatch, lanes):
    """upload and download through the lanes give CuPy's bytes for arrays of one chunk, of
    several with a partial last one, and of fewer chunks than lanes; the host array may change
    once upload returns; an array that is not C-contiguous, or a small one, goes through CuPy;
    a download waits for the work queued before it."""
    from circle_render.canvas import transfer
    monkeypatch.setattr(transfer, "LANES", lanes)
    monkeypatch.setattr(transfer, "UPLOAD_FROM", 1 << 20)
    monkeypatch.setattr(transfer, "DOWNLOAD_FROM", 1 << 20)
    transfer._lanes.cache_clear()
    transfer._pool.cache_clear()
    rng = np.random.default_rng(lanes)
    try:
        for size in (transfer.CHUNK // 4, 7 * transfer.CHUNK // 4 + 3, 3 * transfer.CHUNK // 8 + 5):
            host = rng.random(size, dtype=np.float32)
            want = host.copy()
            dev = transfer.upload(host)
            host[:] = -1                                       # after upload returns: not seen
            assert dev.dtype == np.float32 and np.array_equal(dev.get(), want)
            assert np.array_equal(transfer.download(dev), want)
            wait = "long long t = clock64(); while (clock64() - t < 1000000) {} y = 2"
            spin = cp.ElementwiseKernel("", "float32 y", wait, "spin_then_write")
            spin(dev[:1])                                      # queued before the download
            got = transfer.download(dev)
            assert got[0] == 2 and np.array_equal(got[1:], want[1:])
        wide = rng.random((transfer.CHUNK // 4, 4), dtype=np.float32)[:, :3]        # not C-contiguous
        assert not transfer.staged(wide, 0) and np.array_equal(transfer.upload(wide).get(), wide)
        assert not transfer.staged(np.zeros(10, np.float32), 1 << 20)
    finally:
        transfer._lanes.cache_clear()
        transfer._pool.cache_clear()


def test_a_large_set_is_drawn_as_from_cupy(cp):
    """Host arrays of several chunks each (set() uploads them through the lanes) draw the
    picture that the same arrays given on the GPU draw."""
    pos, rad, col = circles(21, 1_100_000, small=True)           # positions 8.8 MB, colours 13.2 MB
    from_host = Canvas(512, 512, "cuda").set(pos, rad, col).render().to_numpy()
    from_gpu = Canvas(512, 512, "cuda").set(cp.asarray(pos), cp.asarray(rad), cp.asarray(col)).render().to_numpy()
    assert np.array_equal(from_host, from_gpu)


def test_arrays_on_another_gpu_are_refused(cp):
    class Elsewhere:                         # a DLPack array that says it is on GPU 99
        def __dlpack_device__(self):
            return (2, 99)
    canvas = Canvas(32, 32, "cuda").set(*circles(7, 10))
    with pytest.raises(ArgumentError, match="positions is on GPU 99 but the canvas draws on GPU 0"):
        canvas.update(positions=Elsewhere())
    if cp.cuda.runtime.getDeviceCount() > 1:
        with cp.cuda.Device(1):
            other = cp.zeros((10, 2), cp.float32)
        with pytest.raises(ArgumentError, match="is on GPU 1 but the canvas draws on GPU 0"):
            canvas.update(positions=other)


def test_a_cpu_canvas_copies_cuda_arrays_once(cp):
    pos, rad, col = circles(8, 2000)
    got = Canvas(128, 128, "cpu-fast").set(cp.asarray(pos), cp.asarray(rad), cp.asarray(col)).to_numpy()
    assert np.array_equal(got, circle_render.render(pos, rad, col, 128, 128, "cpu-fast"))


def test_the_picture_leaves_the_gpu_only_as_asked(cp):
    """A course-path picture (square: a non-square one is a drawing on the CUDA renderers, drawn
    from the host) stays on the GPU until asked for, in the canvas's row order."""
    pos, rad, col = circles(9, 5000)
    canvas = Canvas(256, 256, "cuda", origin="upper").set(pos, rad, col).render()
    assert canvas.on_gpu
    img = canvas.to_numpy()
    assert np.array_equal(img, canvas.to_numpy(origin="lower")[::-1])
    assert np.array_equal(canvas.to_cupy().get(), img)
    interface = canvas.__cuda_array_interface__
    assert interface["shape"] == (256, 256, 4) and interface["data"][0] == canvas._exported.data.ptr
    assert np.array_equal(cp.asarray(canvas).get(), img)
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(canvas)
    assert t.is_cuda and t.data_ptr() == canvas._exported.data.ptr                # shared, not copied
    assert np.array_equal(t.cpu().numpy(), img)


def test_no_circles_and_snow_on_the_gpu(cp):
    blank = Canvas(40, 30, "cuda")
    assert np.array_equal(blank.to_numpy(), circle_render.render([], [], [], 40, 30, "cpu"))
    assert blank.to_cupy().shape == (30, 40, 4)
    rng = np.random.default_rng(10)
    pos = rng.uniform(0, 1, (3000, 3)).astype(np.float32)
    rad, col = rng.uniform(0.005, 0.05, 3000).astype(np.float32), rng.uniform(0, 1, (3000, 3)).astype(np.float32)
    got = Canvas(256, 256, "cuda-tiled", shading="snow").set(cp.asarray(pos), cp.asarray(rad), cp.asarray(col))
    want = circle_render.render(pos, rad, col, 256, 256, "cpu-fast", shading="snow")
    assert np.abs(got.to_numpy() - want).max() < 1e-3
