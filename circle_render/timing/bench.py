"""``render bench``: time every scene the course's way and with CUDA events, write JSON.

Course way: per-frame Total (clear + advance + render, each followed by a device synchronize,
host clock), frames 0:4, the minimum over runs of each run's per-frame mean.
Kernel way: CUDA events around ``render()`` alone, median over repeats.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from pathlib import Path

from circle_render import __version__, registry
from circle_render.course import stored_times
from circle_render.gpu import gpu_name
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.timing.frames import course_time as frames_course_time
from circle_render.timing.timer import event_times


def source_commit() -> str | None:
    """The git commit of the source tree this package runs from (CIRCLE_RENDER_COMMIT if set),
    or None when it is not a git checkout of circle-render (an installed copy, say)."""
    env = os.environ.get("CIRCLE_RENDER_COMMIT")
    if env:
        return env
    package = Path(__file__).resolve().parent.parent
    if not (package.parent / "pyproject.toml").is_file():
        return None                      # installed: site-packages is no checkout of ours
    try:
        top = subprocess.run(["git", "rev-parse", "--show-toplevel", "HEAD"], capture_output=True,
                             text=True, check=True, cwd=package).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    return top[1] if len(top) == 2 and Path(top[0]).resolve() == package.parent else None


def current_commit() -> str:
    """source_commit(), or "unknown"."""
    return source_commit() or "unknown"


def course_time(renderer_name: str, scene: str, size: int, seed: int, frames=(0, 4), runs: int = 3):
    """Min over runs of the per-frame mean of each phase (ms), plus every run's Total."""
    return frames_course_time(lambda: registry.create(renderer_name), make_scene(scene, seed),
                              size, frames, runs)


def _event_median(step, before, repeats: int) -> float:
    return event_times(step, repeats, before=before, idle=False).median


def kernel_time(renderer_name: str, scene: str, size: int, seed: int, repeats: int = 20):
    """Median of CUDA-event times (ms) of ``render()`` alone, after a warm-up; and of each
    stage of a renderer that names its stages (``stage_names``, run by ``run_stage``), each
    timed after the stages before it."""
    r = registry.create(renderer_name)
    r.load(make_scene(scene, seed), size, size)
    r.clear(); r.advance(); r.render(); r.synchronize()
    render = _event_median(r.render, r.clear, repeats)
    stages = {}
    names = getattr(r, "stage_names", ())
    for k, name in enumerate(names):
        def before(k=k):
            r.clear()
            for earlier in names[:k]:
                r.run_stage(earlier)
        stages[name] = _event_median(lambda name=name: r.run_stage(name), before, repeats)
    return render, stages


def run_bench(renderer_name="cuda", scenes=SCENE_NAMES, size=1024, seed=0, runs=3,
              progress=None) -> dict:
    gpu = gpu_name()
    ref = stored_times(gpu, "render", size) or {}
    record = {"gpu": gpu, "renderer": renderer_name, "version": __version__, "commit": current_commit(),
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "host": platform.node(), "size": size, "seed": seed, "frames": "0:4", "runs": runs,
              "method": "course: per-frame Total = clear+advance+render with device sync, "
                        "min over runs; kernel: CUDA events around render(), median of 20",
              "scenes": {}}
    for name in scenes:
        if progress:
            progress(name)
        phases, totals = course_time(renderer_name, name, size, seed, runs=runs)
        kernel, stages = (kernel_time(renderer_name, name, size, seed) if registry.needs_gpu(renderer_name)
                          else (phases["render"], {}))     # a CPU renderer: no CUDA events
        entry = {**{f"{k}_ms": v for k, v in phases.items()}, "total_runs_ms": totals,
                 "render_kernel_ms": kernel, **{f"stage_{k}_ms": v for k, v in stages.items()}}
        if name in ref:
            entry["course_ref_ms"] = ref[name]
            entry["ratio"] = phases["total"] / ref[name]
        record["scenes"][name] = entry
    return record


def format_table(record: dict) -> str:
    lines = [f"{'scene':<14} {'total ms':>9} {'kernel ms':>10} {'course ms':>10} {'ratio':>7}"]
    for name, e in record["scenes"].items():
        ref = f"{e['course_ref_ms']:.4f}" if "course_ref_ms" in e else "-"
        ratio = f"{e['ratio']:.3f}" if "ratio" in e else "-"
        lines.append(f"{name:<14} {e['total_ms']:>9.4f} {e['render_kernel_ms']:>10.4f} {ref:>10} {ratio:>7}")
    return "\n".join(lines)


def write_record(record: dict, path: str | Path) -> Path:
    from circle_render.io.images import atomic_path
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n")
    return path
