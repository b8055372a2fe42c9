"""``render check`` for renderers: pick the reference times, check every scene, print the table."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from circle_render.check.plugins import PluginError, renderer_factory
from circle_render.check.scene_check import baseline_time, check_scene, mismatch_picture, write_log
from circle_render.course import RULES, read_times_file, render_table, scene_score, stored_times
from circle_render.errors import UserError
from circle_render.gpu import gpu_available, gpu_name, gpu_status
from circle_render.scenes import SCENE_NAMES, SCENES


def _say(text: str) -> None:
    click.echo(f"check: {text}", err=True)


def reference_times(ref_times: str | None, baseline: str | None, scenes: list[str]):
    """(stored Tf per scene, live baseline factory or None, its name, a label for the table).
    Scenes without a stored time are measured live with the baseline."""
    if ref_times and baseline:
        raise UserError("give --ref-times or --baseline, not both")
    if ref_times:
        stored = read_times_file(ref_times, SCENES)
        missing = [s for s in scenes if s not in stored]
        if missing:
            raise UserError(f"--ref-times {ref_times!r} has no time for scene {missing[0]!r}")
        return stored, None, None, f"reference times from {ref_times}"
    if baseline:
        factory, name = renderer_factory(baseline)
        return {}, factory, name, f"measured live with the {name} renderer (--baseline)"
    gpu = gpu_name()
    stored = (stored_times(gpu) or {}) if gpu else {}
    fallback = "cuda" if gpu_available() else "cpu-fast"
    factory, name = renderer_factory(fallback)
    if stored:
        return stored, factory, name, (f"the course's reference times for the {gpu}; scenes it "
                                       f"lacks measured live with the built-in {name} renderer")
    why = f"no stored course times for the {gpu}" if gpu else f"no GPU: {gpu_status()[1]}"
    return {}, factory, name, f"measured live with the built-in {name} renderer ({why})"


def run_check(renderer_spec, rules_name, size, scenes_text, runs, seed, ref_times, baseline,
              logs) -> bool:
    """Check, time and score every scene; print the table. True if every scene passed."""
    rules = RULES[rules_name]
    scenes = [s for s in (scenes_text or "").split(",") if s] or list(rules.scenes)
    unknown = [s for s in scenes if s not in SCENES]
    if unknown:
        raise UserError(f"unknown scene {unknown[0]!r}; accepted: {', '.join(SCENE_NAMES)}")
    factory, name = renderer_factory(renderer_spec)
    stored, base_factory, base_name, label = reference_times(ref_times, baseline, scenes)
    logs = Path(logs)
    try:
        logs.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PluginError(f"cannot create the log folder {str(logs)!r}: {e.strerror or e}") from None
    _say(f"renderer {name}, {rules.name} rules, {size}x{size}, seed {seed}, {runs} runs; Tf: {label}")
    results = []
    for i, scene in enumerate(scenes, 1):
        def progress(text, scene=scene, i=i):
            _say(f"[{i}/{len(scenes)}] {scene}: {text}")
        res, ref, comparison = check_scene(factory, scene, size, seed, runs, progress)
        if scene in stored:
            res.tf, tf_source = stored[scene], label
        else:
            progress(f"Tf: {runs} runs of {base_name}")
            res.tf, res.live, tf_source = baseline_time(base_factory, scene, size, seed, runs), True, \
                f"measured live with {base_name}"
        res.score = scene_score(rules, res.passed, res.t, res.tf)
        write_log(logs, res, comparison, name, size, seed, tf_source)
        if comparison is not None and not res.passed:
            from circle_render.io.images import write_image
            write_image(logs / f"{scene}-mismatches.png", mismatch_picture(ref, comparison))
        verdict = "passed" if res.passed else f"FAILED ({res.reason})"
        progress(f"{verdict}; T {res.t if res.t is None else round(res.t, 4)} ms, "
                 f"Tf {res.tf:.4f} ms, score {res.score}")
        results.append(res)
    click.echo(render_table(rules, [r.row() for r in results], label))
    _say(f"logs in {logs}/")
    return all(r.passed for r in results)


def check_command(what, renderer_spec, rules, size, scenes, runs, seed, ref_times, baseline, logs):
    """``render check``: the renderer table, or the scan/find_repeats table; exits 1 if any
    scene or size was wrong."""
    if what != "render":
        from circle_render.commands.primitives import check_primitive
        sys.exit(check_primitive(what, rules, runs, seed))
    ok = run_check(renderer_spec, rules, size, scenes, runs, seed, ref_times, baseline, logs)
    sys.exit(0 if ok else 1)
