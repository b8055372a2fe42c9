"""Each helper of kernels/course_compat.cuh against a version written from the course's facts
(benchmarks/kernels/course_facts.cuh), in the course's shapes, in one GPU run (issue 35):
- alone: the cull loop's scan (16 x 16, 32 x 32 and one-warp blocks), shadePixel over real
  circles (flat: rand10k, snow: snowsingle), lookupColor, circleInBoxConservative and circleInBox
  over every circle of rand100k against 16 x 16 tiles;
- in the course's designs: the ported tiled kernels (examples/course_port/tiled_scan.cu, 16 x 16;
  tiled_exact.cu, 32 x 32) with the scaffold's helpers, the facts' helpers, and the scans
  course_compat.cuh had before: any-shape (Hillis and Steele, 10 barriers at 256), then shuffles
  (3 barriers, each warp's scan in registers: faster than the course's, so a port beat its original).
Every kernel is compiled as a student's file is (multiply-adds fused); times are CUDA events,
the minimum of --runs after a warm-up.

    python -m benchmarks course-helpers -o helpers.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from circle_render.gpu import gpu_name
from circle_render.scenes import make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.timer import event_times

HERE = Path(__file__).resolve().parent
BENCH = HERE / "kernels" / "course_helpers_bench.cu"
PORTS = HERE / "kernels" / "course_port_variants.cu"
SETS = {0: "scaffold", 1: "facts", 2: "any-shape scan (first)", 3: "shuffle scan (next)"}


def _prepared(path: Path, defines: dict, scene, size: int):
    """The module of ``path`` with these defines, its course parameter block filled for scene."""
    from circle_render.cuda.device_scene import DeviceImage, DeviceScene
    from circle_render.cuda.module import load_module
    from circle_render.cuda.student import CourseParams
    module = load_module(path, defines)
    state, image = DeviceScene(scene), DeviceImage(size, size, scene.shading)
    image.clear()
    CourseParams(state, image, scene).fill(module)
    return module, (state, image)


def _ms(step, runs: int) -> float:
    return event_times(step, runs, warmup=2).min


def helpers_alone(runs: int, size: int) -> dict:
    import cupy as cp
    scenes = {name: make_scene(name) for name in ("rand10k", "snowsingle", "rand100k")}
    out: dict = {}
    for h in (0, 1, 2, 3):
        label = SETS[h]
        row: dict = {}
        module, _ = _prepared(BENCH, {"HELPERS": h}, scenes["rand10k"], size)
        sink = cp.zeros(4096, dtype=np.uint32)
        for block in ((16, 16), (32, 32), (32, 1)):
            scan = module.get_function("bench_scan")
            reps = 256
            t = _ms(lambda scan=scan, block=block, reps=reps, sink=sink: scan((4096,), block, (np.int32(reps), sink)),
                    runs)
            row[f"scan {block[0]}x{block[1]} (us per call, 4096 blocks)"] = 1e3 * t / reps
        if h < 2:
            for scene in ("rand10k", "snowsingle"):
                m, _ = _prepared(BENCH, {"HELPERS": h}, scenes[scene], size)
                shade = m.get_function("bench_shade")
                grid = ((size + 15) // 16, (size + 15) // 16)
                n = min(2048, scenes[scene].n)
                row[f"shadePixel {scene} ({n} circles a pixel, ms)"] = _ms(
                    lambda shade=shade, grid=grid, n=n: shade(grid, (16, 16), (np.int32(0), np.int32(n))), runs)
            lookup, out_f = module.get_function("bench_lookup"), cp.zeros(1 << 20, dtype=np.float32)
            row["lookupColor (1M threads x 256, ms)"] = _ms(
                lambda lookup=lookup, out_f=out_f: lookup((4096,), (256,), (np.int32(256), out_f)), runs)
            m, _ = _prepared(BENCH, {"HELPERS": h}, scenes["rand100k"], size)
            box, out_i = m.get_function("bench_box"), cp.zeros(2, dtype=np.int32)
            grid = ((size + 15) // 16, (size + 15) // 16)
            for exact in (0, 1):
                name = "circleInBoxConservative" if not exact else "circleInBoxConservative + circleInBox"
                row[f"{name} (rand100k x 16x16 tiles, ms)"] = _ms(
                    lambda box=box, grid=grid, exact=exact, out_i=out_i: box(grid, (16, 16), (np.int32(exact), out_i)),
                    runs)
        out[label] = row
        print(label, {k: round(v, 4) for k, v in row.items()}, flush=True)
    return out


def ports(runs: int, size: int, scenes: list[str]) -> dict:
    """The ported tiled kernels' render time with each set of helpers."""
    out: dict = {}
    for scene_name in scenes:
        scene = make_scene(scene_name)
        for port, (block, tile) in (("tiled_scan", ((16, 16), 16)), ("tiled_exact", ((32, 32), 32))):
            row = {}
            for h, label in SETS.items():
                module, _ = _prepared(PORTS, {"HELPERS": h, "PORT": int(port == "tiled_exact")}, scene, size)
                if port == "tiled_scan":
                    kernel = module.get_function("kernelRenderTiles")
                else:
                    snow = scene.shading == "snow"
                    kernel = module.get_function("kernelRenderTilesSnow" if snow else "kernelRenderTilesFlat")
                grid = ((size + tile - 1) // tile, (size + tile - 1) // tile)
                heavy = scene.n >= 1_000_000 or h == 2
                row[label] = _ms(lambda kernel=kernel, grid=grid, block=block: kernel(grid, block, ()),
                                 max(2, runs // 3) if heavy else runs)
            out[f"{port}/{scene_name}"] = row
            base = row[SETS[1]]
            print(f"{port:<12} {scene_name:<11}"
                  + "".join(f" {k} {v:8.3f} ms ({v / base:.3f})" for k, v in row.items()),
                  flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--scenes", default="rand10k,rand100k,snowsingle,biglittle,rand1M,micro2M")
    a = ap.parse_args()
    record = {"gpu": gpu_name(), "commit": current_commit(), "size": a.size,
              "method": "CUDA events around one launch, min of runs after 2 warm-ups; student compile options "
                        "(multiply-adds fused); ratios against the facts' helpers",
              "sets": SETS, "alone": helpers_alone(a.runs, a.size),
              "ports": ports(a.runs, a.size, a.scenes.split(","))}
    Path(a.output).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
