"""Same-run A/B of cpu-fast's knobs (cpu/fast.py constants), each variant under each threading
layer (a process per layer: numba picks its layer once per process), by the course's method
(a fresh renderer per run, frames 0..3 of clear + advance + render, the mean frame, min over runs),
the variants alternating run by run. Writes benchmarks/results/cpu-knobs-COMMIT.json.

    python3 -m benchmarks cpu-knobs [--size 1024] [--runs 5] [--scenes rgb,rgby,...] [--layers tbb,workqueue]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"

# variant -> cpu/fast.py constants it sets, and a patch (a function below) it applies
VARIANTS = {
    "as-is": {},
    "bin-on-threads": {"SERIAL_CIRCLES": 0},          # few circles binned on numba's threads too
    "clear-separate": {"patch": "clear_separately"},  # clear() writes the whole picture, as before
}


def clear_separately(fast) -> None:
    """clear() fills the whole picture at once and render() only blends (no Painted spans)."""
    fast.CpuFastRenderer.clear = fast.CpuFastRenderer._fill_background
SCENES = "rgb,rgby,pattern,bouncingballs,hypnosis,fireworks,snow,rand10k,micro2M"


def measure(scenes: list[str], size: int, runs: int) -> dict:
    """In this process: {variant: {scene: ms}}, variants alternating within each run."""
    sys.path.insert(0, str(ROOT))
    from circle_render import registry
    from circle_render.cpu import fast
    from circle_render.scenes import make_scene
    from circle_render.timing.frames import run_frames
    defaults = {name: getattr(fast, name) for v in VARIANTS.values() for name in v if name != "patch"}
    clear = fast.CpuFastRenderer.clear
    best: dict = {v: {} for v in VARIANTS}
    for name in scenes:
        scene = make_scene(name)
        for _ in range(runs):
            for variant, settings in VARIANTS.items():
                constants = {k: v for k, v in settings.items() if k != "patch"}
                for key, value in {**defaults, **constants}.items():
                    setattr(fast, key, value)
                fast.CpuFastRenderer.clear = clear
                if "patch" in settings:
                    globals()[settings["patch"]](fast)
                r = registry.create("cpu-fast")
                r.load(scene, size, size)
                total = run_frames(r, 0, 4).mean("total")
                best[variant][name] = min(best[variant].get(name, total), total)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scenes", default=SCENES)
    ap.add_argument("--layers", default="tbb,workqueue", help="numba threading layers, a process each")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    scenes = a.scenes.split(",")
    if a.child:
        import numba
        times = measure(scenes, a.size, a.runs)
        print(json.dumps({"layer": numba.threading_layer(), "ms": times}))
        return
    from circle_render.timing.bench import current_commit
    record = {"commit": current_commit(), "host": platform.node(), "cpus": os.cpu_count(), "size": a.size,
              "runs": a.runs, "variants": VARIANTS, "method": __doc__.split("\n\n")[0].replace("\n", " "),
              "layers": {}}
    for layer in a.layers.split(","):
        p = subprocess.run([sys.executable, __file__, "--child", "1", "--size", str(a.size), "--runs", str(a.runs),
                            "--scenes", a.scenes], capture_output=True, text=True,
                           env={**os.environ, "NUMBA_THREADING_LAYER": layer})
        if p.returncode != 0:
            record["layers"][layer] = {"error": p.stderr.strip().splitlines()[-1:]}
            continue
        result = json.loads(p.stdout.strip().splitlines()[-1])
        record["layers"][layer] = result
        for name in scenes:
            row = "  ".join(f"{v} {result['ms'][v][name]:8.3f}" for v in VARIANTS)
            print(f"{layer:<10} {name:<14} {row} ms", flush=True)
    out = Path(a.output) if a.output else RESULTS / f"cpu-knobs-{record['commit'][:10]}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
