"""The course's scoring rules and score tables (pure arithmetic: no GPU, no rendering).

Renderer (per scene, time T against reference time Tf): a failed check scores 0;
T <= 1.2 Tf scores all points; T > 10 Tf scores the correctness points only; otherwise
correctness + ceil(perf * Tf / T). Scan and find_repeats (per size): 1.25 points when
T <= 1.2 Tref, else 1.25 * Tref / T; 0 for a wrong result.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

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
    "cs149": Rules("cs149", CMU_SCENES + ("rand1M", "micro2M"), 2, 7),
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


def _row(*cells) -> str:
    return "| " + " | ".join(f"{c:<15}" for c in cells) + " |"


def _total_row(label: str, value: str) -> str:
    return "|" + " " * 35 + "| " + f"{label:<15} | {value:<15} |"


def _ms(t: float | None) -> str:
    return "n/a" if t is None else f"{t:.4f}"


def render_table(rules: Rules, rows: list[dict], reference_label: str) -> str:
    """The course's score table. rows: dicts with scene, tf, t, passed, score, live (bool:
    Tf measured in this run rather than stored)."""
    out = ["------------", "Score table:", "------------", RULE,
           _row("Scene Name", "Fast Time (Tf)", "Your Time (T)", "Score"), RULE]
    for r in rows:
        tf = _ms(r["tf"]) + ("*" if r.get("live") else "")
        t = _ms(r["t"]) + ("" if r["passed"] else " (F)")
        out.append(_row(r["scene"], tf, t, r["score"]))
    total = sum(r["score"] for r in rows)
    out += [RULE, _total_row("Total score:", f"{total}/{rules.points * len(rows)}"), RULE,
            f"Tf: {reference_label}" + ("; * measured live in this run" if any(r.get("live") for r in rows) else "")]
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
