"""How the fast renderer's frame time grows with circles and with pixels, and what it holds in
GPU memory: the course's timing (per-frame Total over frames 0:4, min of --runs) and CUDA
events around render(), for
- random scenes of 10k to 10M circles (the course's rand rule: radius 0.02-0.08 up to 100k
  circles, 0.009-0.014 above) at 1024x1024;
- rand100k, rand1M and micro2M at 512 to 16384 pixels a side.
Memory: the device bytes the renderer allocated for the scene and size (CuPy's pool).

    python -m benchmarks scaling -o scaling.json [--quick]
"""
import argparse
import json

from circle_render import registry
from circle_render.gpu import gpu_name
from circle_render.scenes import make_scene
from circle_render.scenes.generators import random_circles
from circle_render.timing.bench import current_commit
from circle_render.timing.frames import course_time
from circle_render.timing.timer import Stopwatch, event_times

CIRCLES = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)
SIZES = (512, 1024, 2048, 4096, 8192, 16384)


def measure(scene, size, runs):
    import cupy as cp
    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    before = pool.used_bytes()
    r = registry.create("cuda")
    r.load(scene.copy(), size, size)
    r.clear(); r.advance(); r.render(); r.synchronize()
    held = pool.used_bytes() - before
    render_ms = event_times(r.render, 10, before=r.clear, idle=False).median
    plan = r.plan
    del r
    phases, totals = course_time(lambda: registry.create("cuda"), scene, size, runs=runs)
    pool.free_all_blocks()
    return {"total_ms": phases["total"], "render_ms": render_ms, "total_runs_ms": totals,
            "device_bytes": int(held), "path": plan.name, "tile": plan.geometry.tile}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default="scaling.json")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer points (a smoke test)")
    a = ap.parse_args()
    circles = CIRCLES[:3] if a.quick else CIRCLES
    sizes = SIZES[:3] if a.quick else SIZES
    record = {"gpu": gpu_name(), "commit": current_commit(), "runs": a.runs, "circles": {}, "pixels": {}}
    for n in circles:
        with Stopwatch() as point:
            scene = random_circles(f"rand{n}", n, 0)
            record["circles"][str(n)] = e = measure(scene, 1024, a.runs)
        print(f"circles {n:>9} at 1024: {e['total_ms']:.4f} ms (render {e['render_ms']:.4f}), "
              f"{e['device_bytes'] / 2**20:.1f} MiB, {e['path']}  [{point.s:.1f} s]", flush=True)
    for name in ("rand100k", "rand1M", "micro2M"):
        scene = make_scene(name)
        for size in sizes:
            record["pixels"][f"{name} {size}"] = e = measure(scene, size, a.runs if size <= 4096 else 1)
            print(f"{name:<9} {size:>6}: {e['total_ms']:.4f} ms (render {e['render_ms']:.4f}), "
                  f"{e['device_bytes'] / 2**20:.1f} MiB, {e['path']}", flush=True)
    with open(a.output, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
