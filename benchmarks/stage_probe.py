"""Per-kernel GPU times of the fast renderer, and what a launch costs on the host.

Each measured frame queues a busy-wait kernel first, so the renderer's kernels start back to
back and the CUDA events between them measure GPU time, not Python's launch gaps. Variants are
data, in benchmarks/knobs.py's form ({"tuning": {...}}, {"constants": {...}}, {"choices": {...}},
{"source": [[old, new], ...]}), each compiled and measured side by side.

    python -m benchmarks stages [-o probe.json] [--scenes a,b] [--variants '[{}, {"tuning": {...}}]']
"""
import argparse
import json
from pathlib import Path

import numpy as np
from knobs import load_variant  # benchmarks/knobs.py, beside this script

PROBE = Path(__file__).resolve().parent / "kernels" / "probe.cu"     # spin: a busy-wait

DEFAULT_VARIANTS = [{}]
SCENES = "rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle"


def kernel_times(renderer, reps=15):
    """Median GPU ms of each kernel of render(), measured behind a busy-wait."""
    from circle_render.cuda.module import load_module
    from circle_render.timing.timer import event_timeline
    spin = load_module(PROBE).get_function("spin")
    launches = renderer.kernel_launches()          # they draw over the clear colour themselves
    t = event_timeline([launch for _, launch in launches], reps,
                       before=lambda: spin((1,), (1,), (np.int64(400_000),)))    # about 200 us of GPU time
    out = {name: step.median for (name, _), step in zip(launches, t.steps)}
    out["host_us_per_launch"] = t.issue.median * 1e3 / len(launches)
    return out


def launch_costs(reps=200):
    """Host microseconds: a trivial launch alone, and launch + device synchronize."""
    import cupy as cp

    from circle_render.cuda.module import Launch, load_module
    from circle_render.timing.timer import wall_times
    tiny = Launch(load_module(PROBE).get_function("spin"), (1,), (1,), (np.int64(0),))
    sync = cp.cuda.runtime.deviceSynchronize
    alone = wall_times(tiny, reps, before=sync)
    with_sync = wall_times(tiny, reps, sync=sync, before=sync)
    return {"launch_us": alone.median * 1e3, "launch_and_sync_us": with_sync.median * 1e3}


def phase_costs(scene="bouncingballs", reps=100):
    """Host microseconds of each phase of an animated scene, timed the course's way."""
    from circle_render import registry
    from circle_render.scenes import make_scene
    from circle_render.timing.timer import wall_times
    r = registry.create("cuda")
    r.load(make_scene(scene), 1024, 1024)
    return {phase + "_us": wall_times(getattr(r, phase), reps, sync=r.synchronize, before=r.synchronize).median * 1e3
            for phase in ("clear", "advance", "render")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default="probe.json")
    ap.add_argument("--scenes", default=SCENES)
    ap.add_argument("--sizes", default="1024", help="comma-separated image sizes")
    ap.add_argument("--variants", default=json.dumps(DEFAULT_VARIANTS), help="JSON list of knobs.py variants")
    a = ap.parse_args()
    from circle_render.gpu import gpu_name
    from circle_render.scenes import make_scene
    from circle_render.timing.bench import current_commit
    record = {"gpu": gpu_name(), "commit": current_commit(), "launch": launch_costs(),
              "phases_bouncingballs": phase_costs(), "scenes": {}}
    print(record["launch"], record["phases_bouncingballs"], flush=True)
    cases = [(name, int(size), variant) for name in a.scenes.split(",") for size in a.sizes.split(",")
             for variant in json.loads(a.variants)]
    scenes = {}
    for name, size, variant in cases:
        if name not in scenes:
            scenes[name] = make_scene(name)
        scene = scenes[name]
        r = load_variant(scene, size, variant)
        t = kernel_times(r)
        key = f"{name} {size} {json.dumps(variant)}"
        record["scenes"][key] = t
        kernels = sum(v for k, v in t.items() if k != "host_us_per_launch")
        print(f"{key:<40} total {kernels * 1e3:8.1f} us  " +
              "  ".join(f"{k} {v * 1e3:.1f}" for k, v in t.items() if k != "host_us_per_launch")
              + f"  host/launch {t['host_us_per_launch']:.1f} us", flush=True)
        del r
    with open(a.output, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
