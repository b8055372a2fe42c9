"""The assignment kit's numbers and pictures for docs/assignment.md, in one GPU run:
- the ladder of hints timed the course's way (per-frame Total over frames 0:4, min of 3 runs;
  a rung whose frame takes over a second gets one run) on the scored scenes at 1024:
  the starter, a thread per pixel looping over every circle, the course's tiled design
  (cuda-tiled) and this project's fast renderer (cuda); each rung's check against the reference;
- pictures (256x256) of what breaking each rule looks like, made by the starter and the
  reversed per-pixel loop, and render check's mismatch picture of the starter.

    python -m benchmarks kit -o kit.json --pictures DIR
"""
import argparse
import json

import numpy as np
from ladder import PixelLoopRenderer, ReversedPixelLoopRenderer  # benchmarks/ladder/, beside this script

from circle_render import registry
from circle_render.check.reference_cache import reference_frame
from circle_render.check.scene_check import mismatch_picture
from circle_render.course import RULES, compare, stored_times
from circle_render.cpu.reference import reference_image
from circle_render.cpu.shading import to_bytes
from circle_render.gpu import gpu_name
from circle_render.io.images import write_image
from circle_render.scenes import make_scene
from circle_render.scenes.scene import Scene
from circle_render.timing.bench import current_commit
from circle_render.timing.frames import course_time
from circle_render.timing.timer import wall_times

RUNGS = {"starter": lambda: registry.create("cuda-starter"), "pixel-loop": PixelLoopRenderer,
         "cuda-tiled": lambda: registry.create("cuda-tiled"), "cuda": lambda: registry.create("cuda")}


def stack_scene() -> Scene:
    """Eight blue circles on the same spot: any order blends them alike (rule 2 cannot be
    broken), so what the starter gets wrong here is lost updates alone (rule 1): the threads of
    a warp read the same pixel, blend and write at once, and one of the updates survives."""
    pos = np.tile([0.5, 0.5, 0.0], (8, 1))
    return Scene("stack", pos, np.full(8, 0.35), np.tile([0.1, 0.35, 1.0], (8, 1)))


def draw(make, scene, size):
    r = make()
    r.load(scene.copy(), size, size)
    r.clear(); r.advance(); r.render(); r.synchronize()
    return r.get_image()


def pictures(folder: str) -> dict:
    from pathlib import Path
    out, size = {}, 256
    Path(folder).mkdir(parents=True, exist_ok=True)
    cases = [("rgb", make_scene("rgb")), ("stack", stack_scene()), ("rand10k", make_scene("rand10k"))]
    for name, scene in cases:
        ref = reference_image(scene, size, size, steps=1)
        write_image(f"{folder}/{name}-reference.png", to_bytes(ref))
        for rung, make in (("starter", RUNGS["starter"]), ("reversed", ReversedPixelLoopRenderer)):
            img = draw(make, scene, size)
            c = compare(ref, img)
            write_image(f"{folder}/{name}-{rung}.png", to_bytes(img))
            if c.count:
                write_image(f"{folder}/{name}-{rung}-mismatches.png", mismatch_picture(ref, c))
            out[f"{name} {rung}"] = {"mismatches": c.count, "max_abs_diff": c.max_abs_diff}
            print(name, rung, out[f"{name} {rung}"], flush=True)
    return out


def ladder(scenes, size) -> dict:
    out = {}
    for scene in scenes:
        s = make_scene(scene)
        ref, _ = reference_frame(scene, size, 0)            # frame 0, cached on disk
        for rung, make in RUNGS.items():
            first = wall_times(lambda make=make, s=s: draw(make, s, size))     # draw() synchronizes
            img = first.result
            c = compare(ref, img)
            runs = 1 if first.min > 1000 else 3
            phases, _ = course_time(make, s, size, runs=runs)
            out[f"{scene} {rung}"] = {"total_ms": phases["total"], "render_ms": phases["render"], "runs": runs,
                                      "passed": c.passed, "mismatches": c.count}
            print(f"{scene:<11} {rung:<11} {phases['total']:10.4f} ms  runs {runs}  "
                  f"{'pass' if c.passed else 'FAIL'} ({c.count} mismatches)", flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default="kit.json")
    ap.add_argument("--pictures", default="kit-pictures")
    ap.add_argument("--size", type=int, default=1024)
    a = ap.parse_args()
    scenes = list(RULES["cs149"].scenes)
    record = {"gpu": gpu_name(), "commit": current_commit(), "size": a.size, "course_ms": stored_times(gpu_name()),
              "pictures": pictures(a.pictures), "ladder": ladder(scenes, a.size)}
    with open(a.output, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
