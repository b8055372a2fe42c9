"""Checking one scene for ``render check``: correctness against the reference, the course's
timing, the score, the log and the picture of the mismatches."""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from circle_render.check.plugins import validate_image
from circle_render.check.reference_cache import reference_frame, reference_version
from circle_render.course import compare
from circle_render.scenes import make_scene
from circle_render.timing.frames import course_time, synchronize


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

    def row(self) -> dict:
        return {"scene": self.scene, "tf": self.tf, "t": self.t, "passed": self.passed,
                "score": self.score, "live": self.live}


def check_scene(factory, scene: str, size: int, seed: int, runs: int, progress) -> tuple[SceneResult, np.ndarray, object]:
    """Correctness and time of one scene. Returns (result, the reference image, the
    comparison or None); a renderer that raises or returns a bad image fails, with the
    reason in ``result.reason`` and the traceback in ``result.log``."""
    res = SceneResult(scene)
    ref, cached = reference_frame(scene, size, seed, progress)
    res.log.append(f"reference image: {'cache' if cached else 'rendered now'} (version {reference_version()})")
    comparison = None
    try:
        progress("correctness")
        r = factory()
        r.load(make_scene(scene, seed), size, size)
        r.clear()
        r.advance()
        r.render()
        synchronize(r)
        img = validate_image(r.get_image(), size)
        comparison = compare(ref, img)
        res.passed, res.mismatches = comparison.passed, comparison.count
        res.max_abs_diff = comparison.max_abs_diff
        if not res.passed:
            res.reason = f"{comparison.count} mismatches (more than 5)"
        for k in range(runs):
            progress(f"run {k + 1}/{runs}")
            _, totals = course_time(factory, make_scene(scene, seed), size, runs=1)
            res.runs_ms += totals
        res.t = min(res.runs_ms)
    except Exception as e:
        res.passed = False
        res.reason = f"{type(e).__name__}: {e}"
        res.log.append("the renderer failed:\n" + traceback.format_exc())
    return res, ref, comparison


def baseline_time(factory, scene: str, size: int, seed: int, runs: int) -> float:
    _, totals = course_time(factory, make_scene(scene, seed), size, runs=runs)
    return min(totals)


def write_log(logs: Path, res: SceneResult, comparison, renderer_name: str, size: int, seed: int,
              tf_source: str) -> None:
    lines = [f"scene {res.scene}, renderer {renderer_name}, {size}x{size}, seed {seed}",
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


def mismatch_picture(ref: np.ndarray, comparison) -> np.ndarray:
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
