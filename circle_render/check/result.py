"""The whole result of one ``render check``, as data: what ``--json FILE`` writes and what
``--plot FILE.png`` draws (check/plot.py). It is built from what the check measured and decided
(scene_check.SceneResult, tf.TfSource); nothing is timed or scored again here.

Per scene, beside the scored T and Tf: the Tf the course's stored time would give (``--tf auto``
on a GPU with stored times) and the calibrated live Tf (``--tf live``) where this check has them,
both with the course's ``-f`` cost as the check adds it, so one run under ``--tf live`` gives both
tables (benchmarks/course_fidelity.py). Times are in ms.
"""
from __future__ import annotations

import datetime as dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from circle_render.check.scene_check import SceneResult
from circle_render.check.tf import TfSource
from circle_render.course import Rules

FORMAT = "circle-render check result"
FORMAT_VERSION = 1


def _ms(t: float | None) -> float | None:
    return None if t is None else round(t, 6)


def scene_record(res: SceneResult, source: TfSource, rules: Rules) -> dict[str, Any]:
    """One scene: correctness, T (measured, and scored with the -f cost), Tf and where it came
    from, the other Tf sources this check has, the score."""
    choice = source.chosen.get(res.scene)
    live_tf = None
    if choice is not None and choice.kind == "calibrated" and choice.live_ms is not None and choice.ratio:
        live_tf = choice.live_ms / choice.ratio + source.output_cost.get(res.scene, 0.0)
    elif choice is not None and choice.kind == "live":
        live_tf = choice.live_ms
    return {
        "scene": res.scene,
        "passed": res.passed,
        "reason": res.reason,
        "seeds": list(res.seeds),
        "mismatches": res.mismatches,
        "max_abs_diff": round(float(res.max_abs_diff), 6),
        "t_ms": _ms(res.t),
        "t_measured_ms": _ms(res.t_measured),
        "runs_ms": [_ms(t) for t in res.runs_ms],
        "output_cost_ms": _ms(res.output_cost),
        "tf_ms": _ms(res.tf),
        "tf_live": res.live,
        "tf_from": None if choice is None else choice.kind,
        "tf_detail": res.tf_where,
        "tf_stored_ms": _ms(source.stored_tf(res.scene)),
        "tf_live_ms": _ms(live_tf),
        "tf_live_renderer_ms": _ms(None if choice is None else choice.live_ms),
        "tf_live_ratio": None if choice is None else choice.ratio,
        "score": res.score,
        "points": rules.points,
    }


def check_record(*, renderer_spec: str, renderer_name: str, user_class: bool, rules: Rules, size: int,
                 runs: int, seed: int | None, time_seed: int, tf_mode: str | None, gpu: str | None,
                 results: list[SceneResult], source: TfSource, footer: str, isolation_mode: str,
                 isolation: str) -> dict[str, Any]:
    """The record of one check (``--json``)."""
    from circle_render import __version__
    from circle_render.timing.bench import current_commit
    scenes = [scene_record(r, source, rules) for r in results]
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "version": __version__,
        "commit": current_commit(),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join(["render", *sys.argv[1:]]),
        "renderer": {"spec": renderer_spec, "name": renderer_name, "user_class": user_class},
        "rules": {"name": rules.name, "scenes": list(rules.scenes), "correctness_points": rules.correctness_points,
                  "perf_points": rules.perf_points},
        "size": size,
        "frames": "0:4",
        "runs": runs,
        "seed": seed,
        "timed_seed": time_seed,
        "gpu": gpu,
        "tf_mode": tf_mode or "auto",
        "isolation_mode": isolation_mode,
        "isolation": isolation,
        "footer": footer,
        "scenes": scenes,
        "total": sum(s["score"] for s in scenes),
        "max_total": rules.points * len(scenes),
        "passed": all(s["passed"] for s in scenes),
    }


def write_record(record: dict[str, Any], path: str | Path) -> None:
    """Write the record as JSON, atomically (complete or not there)."""
    from circle_render.io.images import write_text
    write_text(path, json.dumps(record, indent=1) + "\n")
