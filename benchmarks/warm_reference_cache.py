"""Fill the reference-image cache of `render check` in parallel (one process per scene).

    python -m benchmarks warm-cache --size 1024 --scenes rgb,rand10k,... [-j 8]
"""
from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from circle_render.check.reference_cache import reference_frame
from circle_render.timing.timer import wall_times


def one(job):
    scene, size, seed = job
    t = wall_times(lambda: reference_frame(scene, size, seed))
    return scene, t.result[1], t.min / 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scenes", required=True)
    ap.add_argument("-j", "--jobs", type=int, default=8)
    a = ap.parse_args()
    jobs = [(s, a.size, a.seed) for s in a.scenes.split(",") if s]
    with ProcessPoolExecutor(a.jobs) as pool:
        for scene, cached, secs in pool.map(one, jobs):
            print(f"reference {scene} {a.size}: {'cached' if cached else f'rendered in {secs:.1f} s'}",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
