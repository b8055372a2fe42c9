"""Per-kernel GPU times of the fast renderer, and what a launch costs on the host.

Each measured frame queues a busy-wait kernel first, so the renderer's kernels start back to
back and the CUDA events between them measure GPU time, not Python's launch gaps. Variants of
the tunable constants are compiled and measured side by side.

    PYTHONPATH=. python benchmarks/stage_probe.py [-o probe.json] [--scenes a,b] [--variants JSON]
"""
import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

PROBE = Path(__file__).resolve().parent / "kernels" / "probe.cu"     # spin: a busy-wait

DEFAULT_VARIANTS = [{}]
SCENES = "rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle"


def kernel_times(renderer, reps=15):
    """Median GPU ms of each kernel of render(), measured behind a busy-wait."""
    import cupy as cp

    from circle_render.cuda.module import load_module
    spin = load_module(PROBE).get_function("spin")
    launches = renderer.kernel_launches()
    events = [cp.cuda.Event() for _ in range(len(launches) + 1)]
    issue, times = [], {name: [] for name, _ in launches}
    for _ in range(reps):          # kernel_launches() draws over the clear colour itself
        spin((1,), (1,), (np.int64(400_000),))          # about 200 us of GPU time
        events[0].record()
        t0 = time.perf_counter()
        for (name, launch), ev in zip(launches, events[1:]):
            launch()
            ev.record()
        issue.append((time.perf_counter() - t0) * 1e6 / len(launches))
        events[-1].synchronize()
        for (name, _), a, b in zip(launches, events, events[1:]):
            times[name].append(cp.cuda.get_elapsed_time(a, b))
    out = {name: statistics.median(v) for name, v in times.items()}
    out["host_us_per_launch"] = statistics.median(issue)
    return out


def launch_costs(reps=200):
    """Host microseconds: a trivial launch alone, and launch + device synchronize."""
    import cupy as cp

    from circle_render.cuda.module import Launch, load_module
    tiny = Launch(load_module(PROBE).get_function("spin"), (1,), (1,), (np.int64(0),))
    sync = cp.cuda.runtime.deviceSynchronize
    alone, with_sync = [], []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter(); tiny(); t1 = time.perf_counter(); sync(); t2 = time.perf_counter()
        alone.append((t1 - t0) * 1e6); with_sync.append((t2 - t0) * 1e6)
    return {"launch_us": statistics.median(alone), "launch_and_sync_us": statistics.median(with_sync)}


def phase_costs(scene="bouncingballs", reps=100):
    """Host microseconds of each phase of an animated scene, timed the course's way."""
    from circle_render import registry
    from circle_render.scenes import make_scene
    r = registry.create("cuda")
    r.load(make_scene(scene), 1024, 1024)
    out = {}
    for phase in ("clear", "advance", "render"):
        v = []
        for _ in range(reps):
            r.synchronize()
            t0 = time.perf_counter(); getattr(r, phase)(); r.synchronize()
            v.append((time.perf_counter() - t0) * 1e6)
        out[phase + "_us"] = statistics.median(v)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", default="probe.json")
    ap.add_argument("--scenes", default=SCENES)
    ap.add_argument("--sizes", default="1024", help="comma-separated image sizes")
    ap.add_argument("--variants", default=json.dumps(DEFAULT_VARIANTS))
    a = ap.parse_args()
    from circle_render.cuda.fast import FastCudaRenderer
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
        r = FastCudaRenderer(tuning=variant)
        r.load(scene, size, size)
        r.advance(); r.clear(); r.render(); r.synchronize()
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
