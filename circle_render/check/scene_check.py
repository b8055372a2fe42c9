"""Checking one scene for ``render check``: correctness against the reference, the course's
timing (each run's last picture compared too), the score, the log and the picture of the
mismatches. The renderer runs in a worker process (runner.py); the reference images, the
comparisons and the score stay here, in the checker's process."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from circle_render.check.reference_cache import reference_frame, reference_version
from circle_render.check.runner import LAST, Judge, LoadedRenderer, Progress, Workers, run_scene
from circle_render.check.session import Picture
from circle_render.course import Comparison, compare
from circle_render.scenes import SCENES
from circle_render.user_class import image_problem


@dataclass
class SceneResult:
    scene: str
    passed: bool = False
    t: float | None = None
    tf: float | None = None
    live: bool = False
    score: int = 0
    reason: str = ""
    mismatches: int = 0
    max_abs_diff: float = 0.0
    runs_ms: list = field(default_factory=list)
    log: list = field(default_factory=list)
    seeds: list = field(default_factory=list)      # the seeds frame 0 was checked at
    t_measured: float | None = None                 # T as measured (min of runs), before the -f cost
    output_cost: float = 0.0                        # the course's -f cost added to T (and Tf)
    tf_where: str = ""                              # where Tf came from, in words

    def row(self) -> dict:
        return {"scene": self.scene, "tf": self.tf, "t": self.t, "passed": self.passed,
                "score": self.score, "live": self.live}


def picture_problem(picture: Picture, size: int) -> str | None:
    """What is wrong with a renderer's picture before it is compared: not a finite
    (size, size, 4) float32 array (every channel, alpha included), or None."""
    meta, shape = picture.meta, (size, size, 4)
    if not meta.is_array:
        return f"get_image() returned {meta.type_name}, not a NumPy array"
    if meta.shape != shape:
        return f"get_image() returned shape {meta.shape}, expected {shape}"
    if not meta.is_float32():
        return f"get_image() returned dtype {meta.dtype_name()}, expected float32"
    return image_problem(picture.pixels, shape)


def timed_reference(scene: str, size: int, seed: int, first: np.ndarray, progress: Progress,
                    cache: bool) -> np.ndarray:
    """The reference picture of the last timed frame: frame 0's for a still scene."""
    if not SCENES[scene].animated:
        return first
    return reference_frame(scene, size, seed, progress, cache=cache, frame=LAST)[0]


def judge_timed(reference: np.ndarray) -> Judge:
    """The check of a run's last picture: the course's rule against its reference."""
    def judge(frame: int, picture: Picture) -> str | None:
        problem = picture_problem(picture, reference.shape[0])
        if problem or picture.pixels is None:
            return problem or "no picture"
        result = compare(reference, picture.pixels)
        return None if result.passed else f"{result.count} mismatches (more than 5)"
    return judge


def check_scene(workers: Workers, renderer: LoadedRenderer, scene: str, size: int, seeds: list[int],
                time_seed: int, runs: int, progress: Progress, timeout: float,
                cache: bool = True) -> tuple[SceneResult, np.ndarray, Comparison | None]:
    """Correctness at every seed of ``seeds`` (frame 0) and the course's time at ``time_seed``
    (one of ``seeds``). Returns (result, the reference image of the failing or first seed, the
    comparison or None); the reason for a failure is in ``result.reason``, a traceback in
    ``result.log``. ``cache``: whether the reference cache may be used (sandbox.Isolation)."""
    res = SceneResult(scene, seeds=list(seeds))
    refs = {}
    for seed in seeds:
        refs[seed], cached = reference_frame(scene, size, seed, progress, cache=cache and seed == time_seed)
        res.log.append(f"reference image, seed {seed}: {'cache' if cached else 'rendered now'} "
                       f"(version {reference_version()})")
    timed = timed_reference(scene, size, time_seed, refs[time_seed], progress, cache)
    progress("correctness" + (f" (seeds {', '.join(map(str, seeds))})" if len(seeds) > 1 else ""))
    run = run_scene(workers, renderer, scene, size, seeds, time_seed, runs, progress, timeout, judge_timed(timed))
    res.log += run.log
    comparison, ref = None, refs[seeds[0]]
    for seed in seeds:
        if seed not in run.pictures:
            break                                    # the renderer failed before this image
        pixels = run.pictures[seed].pixels
        problem = picture_problem(run.pictures[seed], size)
        if problem or pixels is None:
            text = problem or "no picture"
            res.reason = f"seed {seed}: {text}" if len(seeds) > 1 else text
            return res, ref, None
        comparison, ref = compare(refs[seed], pixels), refs[seed]
        res.mismatches, res.max_abs_diff = comparison.count, comparison.max_abs_diff
        res.log.append(f"seed {seed}: {comparison.count} mismatches")
        if not comparison.passed:
            where = f" at seed {seed}" if len(seeds) > 1 else ""
            res.reason = f"{comparison.count} mismatches (more than 5){where}"
            break
    res.runs_ms = run.runs_ms
    res.t = min(run.runs_ms) if run.runs_ms else None
    res.passed = run.failure is None and not res.reason
    if run.failure is not None:
        res.reason = res.reason or run.failure
        res.t = None
    res.t_measured = res.t
    return res, ref, comparison


def baseline_time(workers: Workers, renderer: LoadedRenderer, scene: str, size: int, seed: int, runs: int,
                  progress: Progress, timeout: float, cache: bool = True) -> tuple[float | None, str]:
    """(the course's time of ``renderer`` on ``scene``, min of ``runs``, or None if it failed;
    the failure's reason or ""). Its timed frames are compared as the renderer's are."""
    first, _ = reference_frame(scene, size, seed, progress, cache=cache)
    timed = timed_reference(scene, size, seed, first, progress, cache)
    # the same steps before the timed runs as a checked renderer takes (frame 0, its picture,
    # untimed frames): without them cuda-tiled's live pattern came out 0.077-0.083 ms against
    # 0.060 in a check of its own (H100), a Tf that gave launch-bound scenes points
    run = run_scene(workers, renderer, scene, size, [seed], seed, runs, progress, timeout, judge_timed(timed))
    if run.failure is not None or not run.runs_ms:
        return None, run.failure or "no time"
    return min(run.runs_ms), ""


def write_log(logs: Path, res: SceneResult, comparison: Comparison | None, renderer_name: str, size: int,
              seeds: list[int],
              tf_source: str) -> None:
    seeds_text = " and ".join(map(str, seeds)) + (" (reproduce one with -S SEED)" if len(seeds) > 1 else "")
    lines = [f"scene {res.scene}, renderer {renderer_name}, {size}x{size}, correctness at seed {seeds_text}",
             f"correctness: {'passed' if res.passed else 'FAILED'}"
             + (f" ({res.reason})" if res.reason else ""),
             f"mismatches: {res.mismatches}; largest |RGB difference|: {res.max_abs_diff:.3g}",
             f"time T (ms): {res.t}; every run's per-frame Total (ms): {res.runs_ms}",
             f"reference time Tf (ms): {res.tf} ({tf_source})", f"score: {res.score}", *res.log]
    if comparison is not None and comparison.count:
        lines.append(f"mismatches (x, y, channel: expected, got; y = 0 at the bottom), first 1000 "
                     f"of {comparison.count}:")
        for (x, y, c), a, b in list(zip(comparison.mismatches.tolist(), comparison.reference,
                                        comparison.actual))[:1000]:
            lines.append(f"  ({x}, {y}) {'rgb'[c]}: expected {a:.4f}, got {b:.4f}")
    from circle_render.io.images import write_text  # atomic: complete or not there
    write_text(logs / f"{res.scene}.log", "\n".join(lines) + "\n")


def mismatch_picture(ref: np.ndarray, comparison: Comparison) -> np.ndarray:
    """(H, W, 3) uint8, top row first: the reference dimmed to grey, mismatching pixels red
    (grown by a pixel so single ones show)."""
    from circle_render.cpu.shading import to_bytes
    grey = to_bytes(ref).mean(axis=2, keepdims=True) * 0.35 + 90
    pic = np.repeat(grey, 3, axis=2).astype(np.uint8)
    h = ref.shape[0]
    mask = np.zeros(ref.shape[:2], bool)
    x, y = comparison.mismatches[:, 0], comparison.mismatches[:, 1]
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            mask[np.clip(h - 1 - y + dy, 0, h - 1), np.clip(x + dx, 0, ref.shape[1] - 1)] = True
    pic[mask] = (255, 0, 0)
    return pic
