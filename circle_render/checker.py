"""``render check``: the course's checker for any renderer, built-in or a user's own class.

For each scored scene: render frame 0 with the renderer and compare it with the reference
renderer's image by the course's rule (cached on disk); time it the course's way (per-frame
Total over frames 0:4, min over runs); score it against a reference time Tf; log it.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from circle_render.scenes import SCENES, make_scene

from circle_render import registry
from circle_render.check import compare
from circle_render.timing.frames import course_time, synchronize
from circle_render.scoring import Rules, scene_score

ROOT = Path(__file__).resolve().parent
# what the reference image depends on: a change to any of these invalidates the cache
REFERENCE_SOURCES = ("cpu/reference.py", "cpu/shading.py", "cpu/animation.py", "cpu/noise.py",
                     "scenes/scene.py", "scenes/rng.py", "scenes/generators.py", "scenes/snow.py",
                     "scenes/__init__.py")


class PluginError(Exception):
    """A ``--renderer`` or ``--baseline`` that cannot be loaded; the message says why."""


# ---------------------------------------------------------------- renderers

def renderer_factory(spec: str) -> tuple[Callable[[], object], str]:
    """(a function that makes a fresh renderer, its display name) for a built-in name or a
    ``module:Class`` / ``path/to/file.py:Class`` spec."""
    if ":" not in spec:
        if spec not in registry.CHOICES:
            raise PluginError(f"unknown renderer {spec!r}; accepted: {', '.join(registry.CHOICES)}, "
                              "module:Class or path/to/file.py:Class")
        name = registry.resolve(spec)
        try:
            registry.create(name)            # fail now (no GPU, say), not in the middle
        except registry.RendererUnavailable as e:
            raise PluginError(str(e)) from None
        return (lambda: registry.create(name)), name
    where, _, cls_name = spec.rpartition(":")
    if where.endswith(".py") or os.sep in where:
        path = Path(where)
        if not path.is_file():
            raise PluginError(f"cannot load renderer {spec!r}: no such file {where!r}")
        mod_name = f"_circle_render_plugin_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]}"
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        loader = lambda: module_spec.loader.exec_module(module)   # noqa: E731
    else:
        module = None
        loader = lambda: importlib.import_module(where)            # noqa: E731
    try:
        loaded = loader()
        module = module or loaded
    except Exception as e:
        raise PluginError(f"cannot load renderer {spec!r}: importing {where!r} raised "
                          f"{type(e).__name__}: {e}") from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise PluginError(f"cannot load renderer {spec!r}: {where!r} has no {cls_name!r}")
    missing = [m for m in ("load", "clear", "advance", "render", "get_image") if not callable(getattr(cls, m, None))]
    if missing:
        raise PluginError(f"cannot use renderer {spec!r}: it lacks {', '.join(missing)} "
                          "(see renderer/base.py for the interface)")
    return cls, getattr(cls, "name", cls_name)


def validate_image(img, size: int) -> np.ndarray:
    """The renderer's image if it is a finite (size, size, 4) float32 array, else ValueError."""
    if not isinstance(img, np.ndarray):
        raise ValueError(f"get_image() returned {type(img).__name__}, not a NumPy array")
    if img.shape != (size, size, 4):
        raise ValueError(f"get_image() returned shape {img.shape}, expected {(size, size, 4)}")
    if img.dtype != np.float32:
        raise ValueError(f"get_image() returned dtype {img.dtype}, expected float32")
    bad = ~np.isfinite(img[..., :3])
    if bad.any():
        y, x, c = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"get_image() has {int(bad.sum())} non-finite values (first at pixel "
                         f"({x}, {y}) channel {'rgb'[c]})")
    return img


# ---------------------------------------------------------------- reference images

def reference_version() -> str:
    h = hashlib.sha256()
    for rel in REFERENCE_SOURCES:
        h.update(rel.encode() + b"\0" + (ROOT / rel).read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    return Path(os.environ.get("CIRCLE_RENDER_CACHE") or Path.home() / ".cache" / "circle-render")


def reference_frame(scene: str, size: int, seed: int, progress=None) -> tuple[np.ndarray, bool]:
    """(frame 0 of ``scene`` from the reference renderer, whether it came from the cache).
    Cached as .npy under cache_dir(), keyed by scene, size, seed and reference_version()."""
    from circle_render.io.images import atomic_path
    from circle_render.cpu.reference import reference_image
    path = cache_dir() / "reference" / f"{scene}-{size}-{seed}-{reference_version()}.npy"
    if path.is_file():
        try:
            img = np.load(path)
            if img.shape == (size, size, 4):
                return img, True
        except (OSError, ValueError):
            pass                               # a damaged cache entry: render it again
    if progress:
        progress("reference image (cpu; cached for next time)")
    img = reference_image(make_scene(scene, seed), size, size)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.save(f, img)
    except OSError:
        pass                                   # no cache (read-only home): still correct
    return img, False


# ---------------------------------------------------------------- one scene

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


# ---------------------------------------------------------------- reference times

def read_ref_times(path: str) -> dict[str, float]:
    """A JSON file of reference times in ms: {"rgb": 0.05, ...} or {"render": {...}}."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise PluginError(f"cannot read --ref-times {path!r}: {e.strerror or e}") from None
    except ValueError as e:
        raise PluginError(f"--ref-times {path!r} is not valid JSON: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("render"), dict):
        data = data["render"]
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and v > 0 for v in data.values()):
        raise PluginError(f"--ref-times {path!r} must map scene names to times in ms above 0, "
                          'e.g. {"rgb": 0.0545}')
    unknown = sorted(set(data) - set(SCENES))
    if unknown:
        raise PluginError(f"--ref-times {path!r} names unknown scene {unknown[0]!r}")
    return {k: float(v) for k, v in data.items()}


# ---------------------------------------------------------------- logs

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
    (logs / f"{res.scene}.log").write_text("\n".join(lines) + "\n")


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


def score(rules: Rules, res: SceneResult) -> None:
    res.score = scene_score(rules, res.passed, res.t, res.tf)
