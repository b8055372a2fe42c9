"""Per-frame cost of what the viewer does on the GPU, without a window: clear + advance +
render, then the frame to 8-bit RGBA on the device and across to the host; against fetching
the float image and converting on the CPU. Median of 30 frames, ms; prints JSON.

    python -m benchmarks viewer [-o FILE] [--scenes rand100k,snow] [--size 1024]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from records import print_record  # benchmarks/records.py, beside this script

from circle_render import registry
from circle_render.display.rgba8 import frame_rgba8, to_rgba8
from circle_render.gpu import gpu_name
from circle_render.scenes import make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.timer import wall_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output")
    ap.add_argument("--scenes", default="rand100k,snow")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--frames", type=int, default=30)
    a = ap.parse_args()
    record = {"gpu": gpu_name(), "commit": current_commit(), "size": a.size, "renderer": "cuda",
              "method": "host clock with device synchronize, median over frames", "scenes": {}}
    for name in a.scenes.split(","):
        r = registry.create("cuda")
        r.load(make_scene(name), a.size, a.size)
        steps = {"render": lambda r=r: (r.clear(), r.advance(), r.render()),
                 "rgba8_on_gpu_and_copy": lambda r=r: frame_rgba8(r),
                 "float_copy_and_cpu_convert": lambda r=r: to_rgba8(r.get_image())}
        med = {k: wall_times(step, a.frames - 1, sync=r.synchronize, warmup=1).median   # the first: warm-up
               for k, step in steps.items()}
        med["frame_total"] = med["render"] + med["rgba8_on_gpu_and_copy"]
        record["scenes"][name] = med
    print_record(record, a.output)


if __name__ == "__main__":
    main()
