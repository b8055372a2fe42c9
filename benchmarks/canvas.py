"""A Canvas frame by frame (issue 38): on the GPU, on the host, against pygfx and a naive loop.

    python -m benchmarks canvas [--cases device,host,oneshot,cpu,memory] [--runs 20] [--quick] [-o RECORD]

Every case measures the whole call a user makes, with the host clock and a synchronize inside
the timed region (circle_render/timing/timer.py ``wall_times``), min and median of --runs; each
ratio is measured in one run, its two sides alternating. Cases (each left out where it cannot
run here, and the record says why):

- device: a Canvas on the GPU (renderer cuda) whose circles the user moves in place on the GPU
  (CuPy, untimed), then ``update(positions=...)`` + ``render()``: rand1M and rand10k at 1024;
  the parts alone (update, render, to_numpy uint8) beside.
- host: NumPy positions in, an RGBA8 frame out on the host (``update`` + ``render`` +
  ``to_numpy(uint8)``), rand1M at 1024, beside pygfx ``Points`` (``alpha_mode="blend"``, sizes
  in screen pixels, a colour and alpha 0.5 per point) in an offscreen canvas doing the same
  loop on the same circles: the positions buffer updated, a draw, the RGBA8 picture read back;
  pygfx at its defaults (2x supersampling, its post-processing anti-aliasing) and at one sample
  a pixel without it (its fastest), on wgpu's high-performance adapter (Vulkan on the GPU).
- oneshot: ``render()`` as one call (a Canvas made, set, drawn, read and dropped) of rand1M at
  1024 (float32 out) and rand100k at 4096 (uint8 out), beside the frame of the same circles.
- cpu: cpu-fast on this machine's cores: ``render()`` against a Canvas frame (update + render +
  to_numpy) of rand10k at 1024; a Canvas animating 1M flow-field particles at 1024
  (examples/canvas_flow.py: step + update + render); a Canvas frame (update + render) against a
  single-threaded naive numba loop (clear, then each circle over its pixel box) on 10k circles of
  2-10 px at 1024, the pictures compared.
- memory: the peak of Python's allocations (tracemalloc: NumPy's included) in one ``render()``
  of 1M float32 circles at 1024, beyond the picture returned, against the inputs' bytes; on
  cpu-fast the renderer's own peak alone too (its tile lists); and the process's peak RSS above
  its RSS before the call (Linux; CuPy's pinned staging buffers included). GPU memory is not
  counted.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import platform
import sys
import traceback
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from records import print_record  # noqa: E402  (benchmarks/records.py, beside this script)

import circle_render  # noqa: E402
from circle_render.gpu import gpu_available, gpu_name  # noqa: E402
from circle_render.scenes import make_scene  # noqa: E402
from circle_render.timing.bench import current_commit  # noqa: E402
from circle_render.timing.timer import Stopwatch, Times, wall_times  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CASES = ("device", "host", "oneshot", "cpu", "memory")
GOALS = {   # issue 38's goals, checked in the record
    "device_1M_ms": 0.20, "device_10k_ms": 0.03, "host_1M_ms": 5.0, "host_x_pygfx": 7.0,
    "oneshot_1M_above_frame_ms": 5.0, "oneshot_100k_4096_uint8_ms": 20.0, "cpu_render_over_frame_10k": 1.3,
    "cpu_animate_1M_fps": 2.0, "cpu_x_naive": 2.0, "memory_over_inputs": 2.0}


def summary(t: Times) -> dict:
    return {"min_ms": round(t.min, 4), "median_ms": round(t.median, 4), "runs": len(t.runs)}


def scene_arrays(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A course scene's circles as a user holds them: (n, 2) positions, (n,) radii, (n, 3)
    colours, float32."""
    s = make_scene(name)
    return np.ascontiguousarray(s.position[:, :2]), s.radius.copy(), np.clip(s.color, 0, 1)


class Moves:
    """Positions a user moves frame after frame: a few small moves from ``pos``, made before
    timing; ``next()`` gives them in turn, ``frames[k]`` one of them."""

    def __init__(self, pos: np.ndarray, count: int = 8, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.frames = [pos + rng.uniform(-0.002, 0.002, pos.shape).astype(np.float32) for _ in range(count)]
        self.k = 0

    def next(self) -> np.ndarray:
        self.k = (self.k + 1) % len(self.frames)
        return self.frames[self.k]


def alternate(a: Any, b: Any, runs: int, sync_a: Any = None, sync_b: Any = None) -> tuple[Times, Times]:
    """Two calls timed in turns, one run each at a time, so that a machine's drift hits both."""
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(runs):
        ta += wall_times(a, 1, sync=sync_a).runs
        tb += wall_times(b, 1, sync=sync_b).runs
    return Times(tuple(ta)), Times(tuple(tb))


# ---------------------------------------------------------------------------------------- GPU

def device_case(runs: int, quick: bool) -> dict:
    return {name: device_frames(name, runs) for name in (("rand10k",) if quick else ("rand1M", "rand10k"))}


def device_frames(name: str, runs: int) -> dict:
    """Frames of ``name``'s circles moved in place on the GPU, and their parts alone."""
    import cupy as cp
    pos, rad, col = scene_arrays(name)
    p = cp.asarray(pos)
    canvas = circle_render.Canvas(1024, 1024, "cuda").set(p, cp.asarray(rad), cp.asarray(col)).render()
    canvas.synchronize()
    step = cp.asarray(np.random.default_rng(1).uniform(-1e-4, 1e-4, pos.shape).astype(np.float32))
    sign = [np.float32(1)]

    def move() -> None:                       # the user's own move, on the GPU, untimed
        sign[0] = -sign[0]
        cp.add(p, sign[0] * step, out=p)
    frame = wall_times(lambda: canvas.update(positions=p).render(), runs, sync=canvas.synchronize, warmup=3,
                       before=move)
    update = wall_times(lambda: canvas.update(positions=p), runs, sync=canvas.synchronize, warmup=2)
    render = wall_times(canvas.render, runs, sync=canvas.synchronize, warmup=2)
    rgba8 = wall_times(lambda: canvas.to_numpy(np.uint8), runs, warmup=2)
    print(f"device {name}: frame {frame.min:.3f} ms (update {update.min:.3f}, render {render.min:.3f})", flush=True)
    return {"frame": summary(frame), "update": summary(update), "render": summary(render),
            "to_numpy_uint8": summary(rgba8), "path": canvas._renderer.plan.name}


def pygfx_loop(pos: np.ndarray, rad: np.ndarray, col: np.ndarray, size: int, fast: bool) -> Any:
    """pygfx Points, offscreen, the same circles: returns (frame(positions) -> RGBA8, adapter)."""
    import pygfx as gfx
    from rendercanvas.offscreen import RenderCanvas
    n = len(rad)
    positions = np.zeros((n, 3), np.float32)
    positions[:, :2] = pos
    canvas = RenderCanvas(size=(size, size), pixel_ratio=1)
    renderer = gfx.WgpuRenderer(canvas, pixel_scale=1, ppaa="none") if fast else gfx.WgpuRenderer(canvas)
    scene = gfx.Scene()
    scene.add(gfx.Background.from_color("#ffffff"))
    geometry = gfx.Geometry(positions=positions, sizes=(2 * rad * size).astype(np.float32),
                            colors=np.c_[col, np.full(n, 0.5)].astype(np.float32))
    scene.add(gfx.Points(geometry, gfx.PointsMaterial(size_space="screen", size_mode="vertex", color_mode="vertex",
                                                      alpha_mode="blend")))
    camera = gfx.OrthographicCamera(1, 1, maintain_aspect=False)
    camera.local.position = (0.5, 0.5, 1)
    canvas.request_draw(lambda: renderer.render(scene, camera))

    def frame(new: np.ndarray) -> np.ndarray:
        geometry.positions.data[:, :2] = new
        geometry.positions.update_full()
        return np.asarray(canvas.draw())
    from pygfx.renderers.wgpu import get_shared
    return frame, get_shared().adapter.summary            # the adapter pygfx draws with


PYGFX_PROBE_S = 60      # a first draw compiles its shaders: seconds


def pygfx_hangs(name: str, fast: bool) -> str | None:
    """Why pygfx cannot be timed here, found in a child process that draws three frames of the
    same circles within PYGFX_PROBE_S (one device's offscreen download never returned, in wgpu's
    sync_wait, and would have hung this process); None where it draws."""
    import subprocess
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import canvas as c; "
            f"pos, rad, col = c.scene_arrays({name!r}); f, _ = c.pygfx_loop(pos, rad, col, 1024, {fast!r}); "
            "[f(pos) for _ in range(3)]")
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PYGFX_PROBE_S)
    except subprocess.TimeoutExpired:
        return f"three offscreen frames did not return within {PYGFX_PROBE_S} s in a child process (a hang in wgpu)"
    if done.returncode:
        return f"the child process failed: {' '.join(done.stderr.split()[-40:])[:300]}"
    return None


def host_case(runs: int, quick: bool) -> dict:
    name = "rand10k" if quick else "rand1M"
    pos, rad, col = scene_arrays(name)
    moved = Moves(pos)
    nxt = moved.next
    canvas = circle_render.Canvas(1024, 1024, "cuda").set(pos, rad, col)
    ours = lambda: canvas.update(positions=nxt()).render().to_numpy(np.uint8, origin="upper")
    out: dict = {"circles": name}
    for _ in range(3):
        ours()
    try:
        import pygfx  # noqa: F401
    except ImportError as e:
        t = wall_times(ours, runs)
        out["circle_render"] = summary(t)
        out["pygfx"] = f"not measured: {e}"
        return out
    for label, fast in (("pygfx_default", False), ("pygfx_fastest", True)):
        hang = pygfx_hangs(name, fast)
        if hang:
            out[label] = f"not measured: {hang}"
            print(f"host {name}: {label} not measured: {hang}", flush=True)
            continue
        try:
            theirs, adapter = pygfx_loop(pos, rad, col, 1024, fast)
            for _ in range(3):
                theirs(nxt())
        except Exception as e:  # noqa: BLE001  (no Vulkan device, a wgpu error: recorded, not fatal)
            out[label] = f"not measured: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
            continue
        a, b = alternate(ours, lambda theirs=theirs: theirs(nxt()), runs)
        picture_ours, picture_theirs = ours(), theirs(moved.frames[moved.k])
        diff = np.abs(picture_ours[..., :3].astype(int) - picture_theirs[..., :3].astype(int))
        out["circle_render"] = summary(a)
        out[label] = {**summary(b), "adapter": adapter, "x_circle_render": round(b.min / a.min, 2),
                      "picture_mean_abs_diff": round(float(diff.mean()) / 255, 4)}
        print(f"host {name}: circle-render {a.min:.2f} ms, {label} {b.min:.2f} ms ({b.min / a.min:.1f}x)", flush=True)
    if "circle_render" not in out:                        # pygfx measured in neither way: ours alone
        t = wall_times(ours, runs)
        out["circle_render"] = summary(t)
        print(f"host {name}: circle-render {t.min:.2f} ms", flush=True)
    return out


def oneshot_case(runs: int, quick: bool) -> dict:
    cases = (("rand10k", 1024, np.float32),) if quick else (("rand1M", 1024, np.float32), ("rand100k", 4096, np.uint8))
    return {f"{name}@{size} {np.dtype(dtype).name}": oneshot(name, size, np.dtype(dtype), runs)
            for name, size, dtype in cases}


def oneshot(name: str, size: int, dtype: np.dtype, runs: int) -> dict:
    """render() as one call beside the frame of the same circles, and its parts."""
    pos, rad, col = scene_arrays(name)

    def call() -> np.ndarray:
        return circle_render.render(pos, rad, col, size, size, "cuda", dtype=dtype)

    def made() -> circle_render.Canvas:
        return circle_render.Canvas(size, size, "cuda").set(pos, rad, col)
    call()
    canvas = made().render()
    one, drawn = alternate(call, lambda: canvas.render().synchronize(), runs)
    parts = {part: summary(wall_times(work, max(3, runs // 4), warmup=1))
             for part, work in (("set", made), ("to_numpy", lambda: canvas.to_numpy(dtype)))}
    print(f"oneshot {name}@{size}: render() {one.min:.2f} ms, frame {drawn.min:.3f} ms", flush=True)
    return {"render_call": summary(one), "frame": summary(drawn), "above_frame_ms": round(one.min - drawn.min, 3),
            "parts": parts}


# ---------------------------------------------------------------------------------------- CPU

def naive_loop() -> Any:
    """The circle-by-circle box loop, single-threaded numba: clear, then each circle's pixels
    blended (the course's test and blend in float32)."""
    import numba
    f32 = np.float32

    @numba.njit(cache=False)
    def draw(img: np.ndarray, pos: np.ndarray, rad: np.ndarray, col: np.ndarray) -> None:
        h, w = img.shape[0], img.shape[1]
        for j in range(h):
            for i in range(w):
                for c in range(4):
                    img[j, i, c] = f32(1)
        inv = f32(1) / f32(w)
        for k in range(pos.shape[0]):
            x, y, r = pos[k, 0], pos[k, 1], rad[k]
            x0, x1 = max(int((x - r) * f32(w)), 0), min(int((x + r) * f32(w)) + 1, w)
            y0, y1 = max(int((y - r) * f32(h)), 0), min(int((y + r) * f32(h)) + 1, h)
            for j in range(y0, y1):
                dy = y - inv * (f32(j) + f32(0.5))
                for i in range(x0, x1):
                    dx = x - inv * (f32(i) + f32(0.5))
                    if dy * dy + dx * dx <= r * r:
                        for c in range(3):
                            img[j, i, c] = f32(0.5) * col[k, c] + f32(0.5) * img[j, i, c]
    return draw


def example() -> Any:
    spec = importlib.util.spec_from_file_location("canvas_flow", ROOT / "examples" / "canvas_flow.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cpu_case(runs: int, quick: bool) -> dict:
    import numba
    out: dict = {"threads": numba.get_num_threads()}
    # render() against a Canvas frame, rand10k at 1024
    pos, rad, col = scene_arrays("rand10k")
    nxt = Moves(pos).next
    canvas = circle_render.Canvas(1024, 1024, "cpu-fast").set(pos, rad, col)
    frame = lambda: canvas.update(positions=nxt()).render().to_numpy()
    call = lambda: circle_render.render(nxt(), rad, col, 1024, 1024, "cpu-fast")
    frame(), call()
    a, b = alternate(call, frame, runs)
    out["render_vs_frame_rand10k"] = {"render_call": summary(a), "frame": summary(b), "ratio": round(a.min / b.min, 3),
                                      "ratio_median": round(a.median / b.median, 3)}
    print(f"cpu: render() {a.min:.1f} ms, Canvas frame {b.min:.1f} ms ({a.min / b.min:.2f}x)", flush=True)
    # a Canvas animating 1M particles
    n = 20_000 if quick else 1_000_000
    flow_canvas, flow = example().make(n, True, 1024)
    step = lambda: flow_canvas.update(positions=flow.step()).render()
    t = wall_times(step, max(3, runs // 4), warmup=1)
    out["animate"] = {"particles": n, **summary(t), "fps": round(1e3 / t.median, 2)}
    print(f"cpu: {n:,} particles animated at {1e3 / t.median:.1f} frames a second", flush=True)
    # against the naive loop: 10k circles of 2-10 px
    rng = np.random.default_rng(0)
    pos = rng.random((10_000, 2), dtype=np.float32)
    rad = (rng.uniform(2, 10, 10_000) / 1024).astype(np.float32)
    col = rng.random((10_000, 3), dtype=np.float32)
    moved = Moves(pos)
    nxt = moved.next
    draw, image = naive_loop(), np.empty((1024, 1024, 4), np.float32)
    small = circle_render.Canvas(1024, 1024, "cpu-fast").set(pos, rad, col)
    ours = lambda: small.update(positions=nxt()).render()
    theirs = lambda: draw(image, nxt(), rad, col)
    ours(), theirs()
    a, b = alternate(ours, theirs, runs)
    draw(image, moved.frames[1], rad, col)
    small.update(positions=moved.frames[1]).render()
    same = bool(np.array_equal(small.to_numpy()[..., :3], image[..., :3]))
    out["naive_10k_2_10px"] = {"canvas_frame": summary(a), "naive_loop": summary(b), "x_naive": round(b.min / a.min, 2),
                               "x_naive_median": round(b.median / a.median, 2), "same_picture": same}
    print(f"cpu: Canvas frame {a.min:.2f} ms, naive loop {b.min:.2f} ms ({b.min / a.min:.2f}x), same: {same}",
          flush=True)
    return out


def memory_case(quick: bool) -> dict:
    n = 100_000 if quick else 1_000_000
    rng = np.random.default_rng(0)
    pos = rng.random((n, 2), dtype=np.float32)
    rad = rng.uniform(0.0005, 0.002, n).astype(np.float32)
    col = rng.random((n, 3), dtype=np.float32)
    inputs = pos.nbytes + rad.nbytes + col.nbytes
    picture = 1024 * 1024 * 16
    out: dict = {"circles": n, "inputs_bytes": inputs, "picture_bytes": picture}
    for renderer in ["cpu-fast"] + (["cuda"] if gpu_available() else []):
        circle_render.render(pos[:10], rad[:10], col[:10], 1024, 1024, renderer)
        gc.collect()
        start = rss_peak_reset()
        tracemalloc.start()
        circle_render.render(pos, rad, col, 1024, 1024, renderer)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        row = {"peak_bytes": peak, "over_inputs_beyond_picture": round((peak - picture) / inputs, 2)}
        if start is not None:      # the whole process's, pinned staging buffers and libraries' own included
            row["rss_peak_above_start_bytes"] = status_bytes("VmHWM") - start
        if renderer == "cpu-fast":            # the renderer's own working memory (its image, scene copy, tile lists)
            from circle_render.cpu.fast import CpuFastRenderer
            from circle_render.scenes.scene import Scene
            scene = Scene("m", np.c_[pos, np.zeros(n, np.float32)], rad, col)
            r = CpuFastRenderer()
            gc.collect()
            tracemalloc.start()
            r.load(scene, 1024, 1024)
            r.clear(), r.render()
            alone = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            row["renderer_alone_bytes"] = alone
            row["over_inputs_beyond_picture_and_renderer"] = round((peak - picture - alone) / inputs, 2)
        out[renderer] = row
        print(f"memory {renderer}: peak {peak / 1e6:.0f} MB, inputs {inputs / 1e6:.0f} MB", flush=True)
    return out


def status_bytes(field: str) -> int:
    """A memory figure of this process from /proc/self/status (Linux), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def rss_peak_reset() -> int | None:
    """Reset the process's peak RSS (Linux: /proc/self/clear_refs) and return its RSS now;
    None where that cannot be done."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return status_bytes("VmRSS")
    except (OSError, KeyError):
        return None


def goals(record: dict) -> dict:
    """Each goal of issue 38 against what was measured here (None: not measured)."""
    def get(*keys: str) -> Any:
        d: Any = record.get("cases", {})
        for k in keys:
            if not isinstance(d, dict) or k not in d:
                return None
            d = d[k]
        return d
    got = {"device_1M_ms": get("device", "rand1M", "frame", "min_ms"),
           "device_10k_ms": get("device", "rand10k", "frame", "min_ms"),
           "host_1M_ms": get("host", "circle_render", "min_ms"),
           # against pygfx's faster configuration (no anti-aliasing pass, pixel scale 1)
           "host_x_pygfx": min((v for v in (get("host", "pygfx_default", "x_circle_render"),
                                             get("host", "pygfx_fastest", "x_circle_render")) if v), default=None),
           "oneshot_1M_above_frame_ms": get("oneshot", "rand1M@1024 float32", "above_frame_ms"),
           "oneshot_100k_4096_uint8_ms": get("oneshot", "rand100k@4096 uint8", "render_call", "min_ms"),
           "cpu_render_over_frame_10k": get("cpu", "render_vs_frame_rand10k", "ratio"),
           "cpu_animate_1M_fps": get("cpu", "animate", "fps"),
           "cpu_x_naive": get("cpu", "naive_10k_2_10px", "x_naive"),
           "memory_over_inputs": get("memory", "cuda" if get("memory", "cuda") else "cpu-fast",
                                     "over_inputs_beyond_picture")}
    at_least = {"host_x_pygfx", "cpu_animate_1M_fps", "cpu_x_naive"}
    return {k: {"goal": GOALS[k], "measured": v,
                "met": None if v is None else (v >= GOALS[k] if k in at_least else v <= GOALS[k])}
            for k, v in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated: {', '.join(CASES)}")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="small circles counts (a smoke test, not a record)")
    ap.add_argument("-o", "--output", help="record path (default benchmarks/results/{H100,cpu}-canvas-COMMIT.json)")
    a = ap.parse_args()
    cases = a.cases.split(",")
    unknown = set(cases) - set(CASES)
    if unknown:
        ap.error(f"unknown cases {sorted(unknown)}; accepted: {', '.join(CASES)}")
    gpu = gpu_available()
    record: dict = {"commit": current_commit(), "host": platform.node(), "cpus": os.cpu_count(), "gpu": gpu_name(),
                    "load_average": os.getloadavg(), "runs": a.runs, "quick": a.quick,
                    "method": "whole calls, host clock with a synchronize inside, min and median; ratios alternate "
                              "their two sides run by run", "cases": {}}
    with Stopwatch() as whole:
        for case in cases:
            if case in ("device", "host", "oneshot") and not gpu:
                record["cases"][case] = "not measured: no usable GPU"
                continue
            with Stopwatch() as took:
                try:
                    result = {"device": lambda: device_case(a.runs, a.quick),
                              "host": lambda: host_case(a.runs, a.quick),
                              "oneshot": lambda: oneshot_case(a.runs, a.quick),
                              "cpu": lambda: cpu_case(a.runs, a.quick), "memory": lambda: memory_case(a.quick)}[case]()
                except Exception as e:  # noqa: BLE001  (a case that fails is recorded; the others still run)
                    traceback.print_exc()
                    result = {"failed": f"{type(e).__name__}: {' '.join(str(e).split())[:500]}"}
            result["seconds"] = round(took.s, 1)
            record["cases"][case] = result
    record["seconds"] = round(whole.s, 1)
    record["goals"] = goals(record)
    name = gpu_name() or ""
    prefix = "H100" if "H100" in name else "H200" if "H200" in name else "gpu" if gpu else "cpu"
    path = a.output or (None if a.quick else RESULTS / f"{prefix}-canvas-{record['commit']}.json")
    print_record(record, path)


if __name__ == "__main__":
    main()
