"""GPU microseconds of one frame of ``-r cuda`` (render() after a clear, one graph, queued behind a
busy-wait so that no host gap is measured), for scenes at sizes, and a hash of each first frame's
picture: run once per source tree (PYTHONPATH) to compare trees in one device session (equal
hashes: bit-identical pictures).

    python -m benchmarks frames [--label new] [--cases rand10k:1024,rand1M:4096]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics

import numpy as np

SPIN = 'extern "C" __global__ void spin(long long c) { long long s = clock64(); while (clock64() - s < c) {} }'
HEAVY = "rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle"


def frame_us(renderer, reps: int = 30) -> float:
    """The median of frame_times."""
    return statistics.median(frame_times(renderer, reps))


def frame_times(renderer, reps: int = 30) -> list[float]:
    """GPU microseconds of ``reps`` frames: render() after a clear, queued behind a busy-wait
    (the package's one event timer, circle_render/timing/timer.py)."""
    import cupy as cp
    spin = cp.RawKernel(SPIN, "spin")

    def before():
        renderer.clear()
        spin((1,), (1,), (np.int64(200_000),))
    try:
        from circle_render.timing.timer import event_times
    except ImportError:    # a tree from before timer.py (compare_trees.sh TIMER=frames times old trees with this)
        from circle_render.timing.bench import event_times  # the same timer, answering a list
    t = event_times(renderer.render, reps, before=before, idle=False)
    return [ms * 1e3 for ms in getattr(t, "runs", t)]


def main():
    from circle_render import registry
    from circle_render.scenes import SCENE_NAMES, make_scene
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="tree")
    ap.add_argument("--cases", default=",".join([f"{s}:1024" for s in SCENE_NAMES] +
                                                [f"{s}:4096" for s in HEAVY.split(",")]))
    a = ap.parse_args()
    out, pictures = {}, {}
    for case in a.cases.split(","):
        name, size = case.split(":")
        r = registry.create("cuda")
        r.load(make_scene(name), int(size), int(size))
        r.clear(); r.advance(); r.render(); r.synchronize()
        pictures[case] = hashlib.sha256(r.get_image().tobytes()).hexdigest()[:16]     # frame 1, cleared
        out[case] = round(frame_us(r), 2)
        del r
    print(json.dumps({"label": a.label, "frame_gpu_us": out, "picture_sha256": pictures}))


if __name__ == "__main__":
    main()
