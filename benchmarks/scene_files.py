"""Time saving and loading a 1M-circle scene file in both formats (CPU only); print JSON.

    python -m benchmarks scenefiles [-o benchmarks/results/scene-files-HOST.json]
"""
from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from records import print_record  # benchmarks/records.py, beside this script

from circle_render.io.scene_files import load_scene, save_scene
from circle_render.scenes import make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.timer import Stopwatch, wall_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    scene = make_scene("rand1M")
    scene.shading = "snow"                    # so that .par can carry it too
    record = {"commit": current_commit(), "host": platform.node(), "circles": scene.n,
              "method": "wall clock, min over repeats", "formats": {}}
    with tempfile.TemporaryDirectory() as d:
        for suffix in (".par", ".circles"):
            path = Path(d) / f"rand1M{suffix}"
            with Stopwatch() as save:
                save_scene(scene, path)
            save_s = save.s
            loads = [ms / 1e3 for ms in wall_times(lambda path=path: load_scene(path), args.repeats).runs]
            record["formats"][suffix] = {"bytes": path.stat().st_size, "save_s": round(save_s, 3),
                                         "load_s": round(min(loads), 3), "load_runs_s": [round(x, 3) for x in loads]}
    print_record(record, args.output)


if __name__ == "__main__":
    main()
