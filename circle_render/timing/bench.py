"""``render bench``: time every scene the course's way (and with CUDA events on a GPU), write JSON.

Course way: per-frame Total (clear + advance + render, each followed by the renderer's
synchronize, host clock), frames 0:4, the minimum over runs (a fresh renderer each) of each run's
per-frame mean; before a scene's first run, one untimed warm-up frame on a renderer of its own,
so that no scene pays for the process's start-up (timing/frames.py warm_up).
Kernel way (GPU renderers only): CUDA events around ``render()`` alone, median over repeats.
A CPU renderer has no kernel time: its record and table give the course way's Render phase.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from circle_render import __version__, registry
from circle_render.course import stored_times
from circle_render.gpu import gpu_name
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.timing.frames import course_time as frames_course_time
from circle_render.timing.frames import warm_up
from circle_render.timing.plot import describe, runs_text
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


def _event_median(step: Callable[[], object], before: Callable[[], object], repeats: int) -> float:
    return event_times(step, repeats, before=before, idle=False).median


def kernel_time(renderer_name: str, scene: str, size: int, seed: int,
                repeats: int = 20) -> tuple[float, dict[str, float]]:
    """Median of CUDA-event times (ms) of ``render()`` alone, after a warm-up; and of each
    stage of a renderer that names its stages (``stage_names``, run by ``run_stage``), each
    timed after the stages before it."""
    r = registry.create(renderer_name)
    r.load(make_scene(scene, seed), size, size)
    r.clear(); r.advance(); r.render(); r.synchronize()
    render = _event_median(r.render, r.clear, repeats)
    stages: dict[str, float] = {}
    names = getattr(r, "stage_names", ())
    for k, name in enumerate(names):
        def before(k: int = k) -> None:
            r.clear()
            for earlier in names[:k]:
                r.run_stage(earlier)
        def stage(name: str = name) -> None:
            r.run_stage(name)
        stages[name] = _event_median(stage, before, repeats)
    return render, stages


def cpu_name() -> str:
    """This machine's CPU model (Linux: /proc/cpuinfo), else what platform knows, else "CPU"."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def cpu_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:               # not Linux
        return os.cpu_count() or 1


def method_text(on_gpu: bool, runs: int) -> str:
    """What a record's numbers are, in words (stored in the record, printed over the table)."""
    course = (f"course: per-frame Total = clear + advance + render, each followed by the renderer's "
              f"synchronize (host clock), frames 0:4, {runs_text(runs)} (a fresh renderer each); "
              "one untimed warm-up frame per scene first (start-up left out)")
    if on_gpu:
        return course + "; kernel: CUDA events around render() alone, median of 20"
    return course + "; render: that run's Render phase (a CPU renderer: no CUDA events)"


def run_bench(renderer_name: str = "cuda", scenes: Sequence[str] = SCENE_NAMES, size: int = 1024, seed: int = 0,
              runs: int = 3, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time ``scenes`` with ``renderer_name`` (a built-in name, ``auto`` included, or a user's
    spec); the record (a dict, as written to JSON)."""
    if not registry.is_user_spec(renderer_name):
        renderer_name = registry.resolve(renderer_name)
    on_gpu = registry.needs_gpu(renderer_name)
    gpu, cpu = gpu_name(), cpu_name()
    ref = stored_times(gpu, "render", size) or {}
    entries: dict[str, dict[str, Any]] = {}
    record: dict[str, Any] = {"gpu": gpu, "cpu": cpu, "cpu_cores": cpu_cores(), "device": gpu if on_gpu else cpu,
              "renderer": renderer_name, "renderer_name": registry.display_name(renderer_name),
              "on_gpu": on_gpu, "version": __version__, "commit": current_commit(),
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "host": platform.node(), "size": size, "seed": seed, "frames": "0:4", "runs": runs,
              "method": method_text(on_gpu, runs),
              **({"course_ref": f"the course's binary on {gpu}"} if ref else {}),
              "scenes": entries}
    for name in scenes:
        if progress:
            progress(name)
        scene = make_scene(name, seed)
        warm_ms = 1e3 * warm_up(lambda: registry.create(renderer_name), scene, size)
        phases, totals = frames_course_time(lambda: registry.create(renderer_name), scene, size, runs=runs)
        entry: dict[str, Any] = {**{f"{k}_ms": v for k, v in phases.items()}, "total_runs_ms": totals,
                                 "warmup_ms": warm_ms}
        if on_gpu:
            kernel, stages = kernel_time(renderer_name, name, size, seed)
            entry["render_kernel_ms"] = kernel
            entry.update({f"stage_{k}_ms": v for k, v in stages.items()})
        if name in ref:
            entry["course_ref_ms"] = ref[name]
            entry["ratio"] = phases["total"] / ref[name]
        entries[name] = entry
    return record


def format_table(record: dict) -> str:
    """The record as a table: a line saying what was timed, then a row per scene."""
    on_gpu = record.get("on_gpu", "render_kernel_ms" in next(iter(record["scenes"].values()), {}))
    who, how = describe(record)
    lines = [who, f"ms per frame: {how}",
             (f"{'scene':<14} {'total ms':>9} {'kernel ms' if on_gpu else 'render ms':>10} "
              f"{'course ms':>10} {'ratio':>7}")]
    for name, e in record["scenes"].items():
        ref = f"{e['course_ref_ms']:.4f}" if "course_ref_ms" in e else "-"
        ratio = f"{e['ratio']:.3f}" if "ratio" in e else "-"
        second = e["render_kernel_ms"] if on_gpu else e["render_ms"]
        lines.append(f"{name:<14} {e['total_ms']:>9.4f} {second:>10.4f} {ref:>10} {ratio:>7}")
    if on_gpu:
        lines.append("kernel ms: CUDA events around render() alone, median of 20")
    if "course_ref" in record:
        lines.append(f"course ms: {record['course_ref']}; ratio = total / course")
    return "\n".join(lines)


def write_record(record: dict, path: str | Path) -> Path:
    from circle_render.io.images import atomic_path
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2) + "\n")
    return path
