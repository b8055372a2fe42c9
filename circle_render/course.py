"""The course's rules, in one place: the correctness check, the scoring and its tables, and
the reference times (``golden/ref_times.json``, or a user's file of the same shape).

Correctness: compare r, g, b of two images (alpha ignored); a value that is not finite or is
more than TOLERANCE from the reference is a mismatch; more than MAX_MISMATCHES fails.

Renderer score (per scene, time T against reference time Tf): a failed check scores 0;
T <= 1.2 Tf scores all points; T > 10 Tf scores the correctness points only; otherwise
correctness + ceil(perf * Tf / T). Scan and find_repeats (per size): 1.25 points when
T <= 1.2 Tref, else 1.25 * Tref / T; 0 for a wrong result.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NoReturn

import numpy as np

from circle_render.errors import UserError

# ---------------------------------------------------------------- correctness
TOLERANCE = 0.1        # a value further than this from the reference is a mismatch
MAX_MISMATCHES = 5     # more than this many mismatches fails the check


@dataclass
class Comparison:
    mismatches: np.ndarray    # (k, 3) int: x, y, channel of each mismatch (y = 0 at the bottom)
    reference: np.ndarray     # (k,) the reference values there
    actual: np.ndarray        # (k,) the compared values there
    max_abs_diff: float       # largest |difference| over all finite r, g, b values

    @property
    def count(self) -> int:
        return len(self.mismatches)

    @property
    def passed(self) -> bool:
        return self.count <= MAX_MISMATCHES


def compare(reference: np.ndarray, actual: np.ndarray) -> Comparison:
    """Compare two (H, W, 4) images by the course's rule (non-finite values are mismatches)."""
    if reference.shape != actual.shape:
        raise ValueError(f"image shapes differ: {reference.shape} vs {actual.shape}")
    ref = reference[..., :3].astype(np.float32)
    got = actual[..., :3].astype(np.float32)
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - ref)
        bad = ~np.isfinite(got) | (diff > TOLERANCE)
    y, x, c = np.nonzero(bad)
    finite = np.isfinite(diff)
    worst = float(diff[finite].max()) if finite.any() else 0.0
    return Comparison(np.stack([x, y, c], axis=1), ref[y, x, c], got[y, x, c], worst)


# ---------------------------------------------------------------- scores
# Ratios are computed from measured floats: "exactly 1.2x" or "exactly 10x" must not flip on
# the last bit, so comparisons and the ceiling allow this relative slack.
SLACK = 1e-9


@dataclass(frozen=True)
class Rules:
    name: str
    scenes: tuple[str, ...]
    correctness_points: int
    perf_points: int

    @property
    def points(self) -> int:
        return self.correctness_points + self.perf_points

    @property
    def total(self) -> int:
        return self.points * len(self.scenes)


CMU_SCENES = ("rgb", "rand10k", "rand100k", "pattern", "snowsingle", "biglittle")
RULES = {
    "cmu": Rules("cmu", CMU_SCENES, 2, 10),
    "cs149": Rules("cs149", (*CMU_SCENES, "rand1M", "micro2M"), 2, 7),
}
SCAN_SIZES = {
    "cmu": (10_000, 100_000, 1_000_000, 2_000_000),
    "cs149": (1_000_000, 10_000_000, 20_000_000, 40_000_000),
}
SCAN_POINTS = 1.25


def scene_score(rules: Rules, passed: bool, t: float | None, tf: float | None) -> int:
    """Points for one scene: 0 if it failed (or has no time), else by the time ratio."""
    if not passed or t is None or tf is None or not math.isfinite(t) or t <= 0:
        return 0
    if t <= 1.2 * tf * (1 + SLACK):
        return rules.points
    if t > 10 * tf * (1 + SLACK):
        return rules.correctness_points
    return rules.correctness_points + math.ceil(rules.perf_points * tf / t - SLACK)


def scan_score(correct: bool, t: float | None, tref: float) -> float:
    """Points for one scan/find_repeats size."""
    if not correct or t is None or not math.isfinite(t) or t <= 0:
        return 0.0
    if t <= 1.2 * tref * (1 + SLACK):
        return SCAN_POINTS
    return SCAN_POINTS * tref / t


RULE = "-" * 73


def _row(*cells: object) -> str:
    return "| " + " | ".join(f"{c:<15}" for c in cells) + " |"


def _total_row(label: str, value: str) -> str:
    return "|" + " " * 35 + "| " + f"{label:<15} | {value:<15} |"


def _ms(t: float | None) -> str:
    return "n/a" if t is None else f"{t:.4f}"


def render_table(rules: Rules, rows: list[dict], footer: str) -> str:
    """The course's score table, then ``footer`` (where each Tf came from). rows: dicts with
    scene, tf, t, passed, score, live (bool: Tf measured in this run, marked ``*``)."""
    out = ["------------", "Score table:", "------------", RULE,
           _row("Scene Name", "Fast Time (Tf)", "Your Time (T)", "Score"), RULE]
    for r in rows:
        tf = _ms(r["tf"]) + ("*" if r.get("live") else "")
        t = _ms(r["t"]) + ("" if r["passed"] else " (F)")
        out.append(_row(r["scene"], tf, t, r["score"]))
    total = sum(r["score"] for r in rows)
    out += [RULE, _total_row("Total score:", f"{total}/{rules.points * len(rows)}"), RULE, footer]
    return "\n".join(out)


def scan_table(title: str, rows: list[dict]) -> str:
    """The course's scan/find_repeats table. rows: dicts with size, tref, t, correct, score."""
    out = ["-" * 25, f"{title} Score Table:", "-" * 25, RULE,
           _row("Element Count", "Ref Time", "Student Time", "Score"), RULE]
    for r in rows:
        t = _ms(r["t"]) + ("" if r["correct"] else " (F)")
        out.append(_row(r["size"], f"{r['tref']:.3f}", t, f"{r['score']:.2f}"))
    total = sum(r["score"] for r in rows)
    out += [RULE, _total_row("Total score:", f"{total:.2f}/{SCAN_POINTS * len(rows):.2f}"), RULE]
    return "\n".join(out)


# ---------------------------------------------------------------- reference times

MEASURED_SIZE = 1024   # the stored render times were measured at this image size


def ref_times_file() -> Path:
    """The stored reference times, by GPU model: golden/ref_times.json in the package."""
    return Path(str(resources.files("circle_render") / "golden" / "ref_times.json"))


def _ref_data() -> dict:
    return json.loads(ref_times_file().read_text())


def same_gpu(a: str, b: str) -> bool:
    """GPU model names match exactly (case and spacing aside): an "NVIDIA H100 PCIe" is not
    the "NVIDIA H100 80GB HBM3" the times were measured on."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _gpu_tables(gpu: str | None) -> dict | None:
    if gpu is None:
        return None
    for model, tables in _ref_data()["gpus"].items():
        if same_gpu(model, gpu):
            return tables
    return None


def stored_times(gpu: str | None, kind: str = "render", size: int | None = None) -> dict[str, float] | None:
    """The course's reference times (ms) of ``kind`` (render, render_f, scan, find_repeats,
    thrust_scan) measured on exactly this GPU model; None for any other GPU, and for render
    times at a ``size`` other than MEASURED_SIZE (they were measured there only)."""
    if kind.startswith("render") and size is not None and size != MEASURED_SIZE:
        return None
    tables = _gpu_tables(gpu)
    return None if tables is None else tables.get(kind)


OUTPUT_COST_GPU = "NVIDIA H100 80GB HBM3"


def output_costs() -> dict[str, float]:
    """The course's ``-f`` cost per scene, ms: what writing each frame's picture to a file adds
    to the course's Total (its checker times with -f). ``render_f`` less ``render`` on the
    H100, where both were measured (``output_cost`` in ref_times.json says how); at least 0."""
    tables = _gpu_tables(OUTPUT_COST_GPU) or {}
    with_f, without = tables.get("render_f", {}), tables.get("render", {})
    return {s: max(0.0, round(with_f[s] - without[s], 6)) for s in without if s in with_f}


def session_spread(gpu: str | None) -> dict[str, tuple[float, float]]:
    """Per launch-bound scene, the fastest and slowest Total (ms) of the course's binary with
    ``-f`` over the device sessions recorded on ``gpu`` (``render_f_sessions`` in
    ref_times.json, whose method says why): where a stored Tf is one session of several."""
    tables = _gpu_tables(gpu) or {}
    return {s: (float(lo), float(hi)) for s, (lo, hi) in tables.get("render_f_sessions", {}).items()}


@dataclass(frozen=True)
class Calibration:
    """How Tf is made where no course time was measured: ``renderer`` (the course's design)
    timed live, divided per scene by its measured ratio to the course's binary."""
    renderer: str
    gpu: str
    ratios: dict            # scene -> renderer Total / course binary Total (same method)
    method: str

    def tf(self, scene: str, live_ms: float) -> float:
        return live_ms / self.ratios[scene]


def calibration() -> Calibration:
    c = _ref_data()["calibration"]
    return Calibration(c["renderer"], c["gpu"], dict(c["ratio"]), c["method"])


MAX_TIMES_FILE = 1 << 20          # a --ref-times file is a few hundred bytes; refuse what is not


def _refuse_constant(text: str) -> NoReturn:
    raise ValueError(f"{text} is not a number of milliseconds")


def read_times_file(path: str, scenes_known: Iterable[str]) -> dict[str, float]:
    """A user's reference times in ms, ``{"rgb": 0.05, ...}`` or ``{"render": {...}}`` (the
    ``--ref-times`` file): finite numbers above 0 only (not NaN, Infinity, 1e400 or true);
    UserError naming the problem otherwise."""
    what = f"--ref-times {path!r}"
    try:
        with open(path, "rb") as f:                     # a pipe is fine (<(...)); /dev/zero is too big
            data = f.read(MAX_TIMES_FILE + 1)
        if len(data) > MAX_TIMES_FILE:
            raise ValueError(f"it holds more than {MAX_TIMES_FILE >> 20} MiB")
        text = data.decode("utf-8")
    except OSError as e:
        raise UserError(f"cannot read {what}: {e.strerror or e}") from None
    except ValueError as e:                             # too big, not UTF-8
        raise UserError(f"cannot read {what}: {e}") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_number,
                          parse_float=_bounded_number)
    except RecursionError:
        raise UserError(f"{what} is not valid JSON: nested too deeply") from None
    except ValueError as e:
        raise UserError(f"{what} is not valid JSON: {e}") from None
    if isinstance(data, dict) and isinstance(data.get("render"), dict):
        data = data["render"]
    example = '{"rgb": 0.0545}'
    if not isinstance(data, dict) or not data:
        raise UserError(f"{what} must map scene names to times in ms above 0, e.g. {example}")
    unknown = sorted(set(data) - set(scenes_known))
    if unknown:
        raise UserError(f"{what} names unknown scene {unknown[0]!r}")
    for scene, v in data.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise UserError(f"{what}: the time of {scene!r} must be a finite number of ms above 0, "
                            f"got {json.dumps(v)[:40]}; e.g. {example}")
    return {k: float(v) for k, v in data.items()}


def _bounded_number(text: str) -> float:
    """A JSON number as a float; ValueError past float's range (1e400) or for 300-digit integers."""
    if len(text) > 100:
        raise ValueError(f"the number {text[:20]}... has {len(text)} characters")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range")
    return value
