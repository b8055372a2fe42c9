"""Experiment: the draw of a binned scene with any supertile grid, lists made on the host.

What the draw alone does with other supertiles, whatever the binning supports: it lists the
front layer's circles (or every circle) per supertile on the host (the twin's rule: every
supertile the tile box touches, circle order), compiles kernels/draw.cu with SUPER_GRID = g,
times the first draw (``draw``, or ``draw_front`` with a front layer; CUDA events, median of
launches back to back) and compares its image with the renderer's own (r, g, b: alpha follows
how hits fall into rounds). This is how the plan's
supertiles were chosen (constants.SUPER_RADII; docs/perf-notes.md, "Plan and paths").

    python -m benchmarks supergrid --scene rand1M --size 4096 --grids 8,16,32
"""
import argparse
import json

import numpy as np


def host_lists(position, radius, width, height, tile, super_px, grid):
    """(entries (k, 2) uint32, starts (grid^2 + 1) int32): each supertile's list in circle order,
    as the binning's twins make them."""
    from circle_render.twins import bin as B
    from circle_render.twins.tiles import tile_box
    touch = B.super_touch(position, radius, width, height, tile, super_px, grid)
    entries = B.bin_emit(touch, tile_box(position, radius, width, height, tile), super_px // tile, grid)
    return entries, B.list_starts(np.bincount(touch.tile, minlength=grid * grid))


def time_launch(launch, reps=20):
    """Median GPU microseconds of ``reps`` launches queued back to back, behind one more."""
    from circle_render.timing.timer import event_timeline
    steps = event_timeline([launch] * reps, before=launch).steps
    return float(np.median([t.runs[0] for t in steps])) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scene", default="rand1M")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--grids", default="8,16,32")
    ap.add_argument("--variants", default='[{}]', help="JSON list of extra compile defines")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    import dataclasses

    import cupy as cp

    from circle_render.cuda.binned import BinnedPath, LayeredPath, SupertileLists, supertile_px
    from circle_render.cuda.fast import FastCudaRenderer
    from circle_render.cuda.module import KernelFile
    from circle_render.scenes import make_scene
    scene = make_scene(a.scene)
    W = H = a.size
    base = FastCudaRenderer()
    base.load(scene, W, H)
    base.clear(); base.render(); base.synchronize()
    want = base.get_image()
    path = base.path
    if not isinstance(path, BinnedPath):
        raise SystemExit(f"{a.scene} at {a.size} is not binned ({base.plan.name})")
    layer = path.front if isinstance(path, LayeredPath) else path.all     # the circles the first draw takes
    p = path.policy
    first = p.geometry.n - layer.count
    pos, rad = scene.position[first:], scene.radius[first:]
    out = {"scene": a.scene, "size": a.size, "front": int(layer.count), "path": p.name, "runs": []}
    for g in map(int, a.grids.split(",")):
        spx = supertile_px(W, H, p.geometry.tile, g)
        entries, starts = host_lists(pos, rad, W, H, p.geometry.tile, spx, g)
        for variant in json.loads(a.variants):
            # the draw alone, compiled for this grid: a path of the same policy, with these lists,
            # drawing into the renderer's image
            probe = dataclasses.replace(p, super_grid=g, super_px=spx, capacity=len(entries)).prepare(scene)
            probe.image = path.image
            probe.lists = SupertileLists(counts=None, warp_offsets=None, totals=None, starts=cp.asarray(starts),
                                         entries=cp.asarray(entries))
            probe.draw_cu = KernelFile("draw.cu", probe.policy.defines | variant, probe.launched)
            if isinstance(probe, LayeredPath):
                probe.draw_front(cleared=True)                 # compiled, warmed
            else:
                probe.draw(probe.all, cleared=True)
            launch = probe.launched[-1][1]
            us = time_launch(launch)
            got = base.get_image()
            diff = float(np.abs(got - want)[..., :3].max())      # alpha follows the rounds
            deferred = int(probe.deferred[0].get()) if isinstance(probe, LayeredPath) else 0
            run = {"grid": g, "super_px": spx, "entries": len(entries), "variant": variant,
                   "draw_us": us, "deferred": deferred, "max_diff": diff}
            out["runs"].append(run)
            print(json.dumps(run), flush=True)
    if a.output:
        with open(a.output, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
