"""``render check`` for renderers: pick the reference times, check every scene, print the table.

Every renderer runs in a worker process (check/runner.py); a user's class runs confined
(check/sandbox.py), and the times that score are taken on this process's clock."""
from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from circle_render import registry
from circle_render.check import reaper
from circle_render.check.plugins import PluginError, load_renderer
from circle_render.check.reference_cache import max_cache_bytes, reference_folder, renew_key
from circle_render.check.runner import LoadedRenderer, Workers
from circle_render.check.sandbox import Isolation, choose, trusted
from circle_render.check.scene_check import baseline_time, check_scene, mismatch_picture, write_log
from circle_render.check.tf import tf_source
from circle_render.course import RULES, Rules, render_table, scene_score
from circle_render.errors import UserError
from circle_render.scenes import SCENE_NAMES, SCENES
from circle_render.user_cache import cache_dir
from circle_render.user_class import is_path, split_spec


def _say(text: str) -> None:
    from circle_render.progress import notice  # left out with --quiet
    notice(f"check: {text}")


def correctness_seeds(seed: int | None, scene: str) -> list[int]:
    """The seeds frame 0 is checked at: ``-S`` alone when given; else seed 0 (the one timed)
    and, as the course's checker does, a random seed per scene (0..100000)."""
    if seed is not None:
        return [seed]
    return [0, random.SystemRandom().randint(1, 100_000)]


def prepare_logs(logs: str) -> Path:
    """The log folder, made if needed and tried for writing: refused (one line) before any
    scene runs if it cannot hold the logs."""
    folder = Path(logs)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".render-check-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise PluginError(f"cannot write in the log folder {str(folder)!r}: {e.strerror or e}") from None
    return folder


def isolation_for(specs: list[str | None]) -> Isolation:
    """The confinement of the users' classes among ``specs`` (trusted() if there are none)."""
    users = [s for s in specs if s and registry.is_user_spec(s)]
    if not users:
        return trusted()
    needs = []
    for spec in users:
        where, _ = split_spec(spec)                # a malformed spec: one line, before anything runs
        if is_path(where):
            path = Path(where).resolve()
            needs += [str(path), str(path.parent)]
    return choose(needs, [str(reference_folder())], cache_dir() / "sandbox")


def timing_footer(workers: Workers) -> str:
    echo = statistics.median(c.echo_ns for c in workers.channels) / 1e3 if workers.channels else 0.0
    return ("T (and a live Tf): frames 0-3 back to back in the renderer's worker, each timed on the checker's "
            "own clock (clear, advance, render, each synchronized) less the channel's echo "
            f"({echo:.1f} us); after each run its picture is taken (get_image(), twice) and compared, and "
            "what the first call takes beyond the second counts against every frame.")


@dataclass(frozen=True)
class Outputs:
    """Where the whole result goes besides the table: ``--json FILE``, ``--plot FILE.png``."""
    json: Path | None = None
    plot: Path | None = None

    @classmethod
    def checked(cls, json_path: str | None, plot_path: str | None) -> Outputs:
        """Refused (one line) before any scene runs if they could not be written."""
        from circle_render.io.images import check_output_path
        return cls(None if json_path is None else check_output_path(json_path, (".json",), "--json"),
                   None if plot_path is None else check_output_path(plot_path, (".png",), "--plot"))


def run_check(renderer_spec: str, rules_name: str, size: int, scenes_text: str | None, runs: int,
              seed: int | None, ref_times: str | None, baseline: str | None, logs: str,
              tf_mode: str | None = None, scene_timeout: float = 300.0, outputs: Outputs | None = None) -> bool:
    """Check, time and score every scene; print the table (and write ``outputs``). True if every
    scene passed."""
    rules = RULES[rules_name]
    scenes = [s for s in (scenes_text or "").split(",") if s] or list(rules.scenes)
    unknown = [s for s in scenes if s not in SCENES]
    if unknown:
        raise UserError(f"unknown scene {unknown[0]!r}; accepted: {', '.join(SCENE_NAMES)}")
    outputs = outputs or Outputs()
    max_cache_bytes()                    # a bad $CIRCLE_RENDER_CACHE_MAX: say so before any work
    from circle_render.gpu import gpu_status
    gpu = gpu_status()[0]
    isolation = isolation_for([renderer_spec, baseline])
    reaper.become_subreaper()            # whatever a worker starts comes back to be ended
    workers = Workers(isolation, size, gpu)
    try:
        return _check_scenes(workers, rules, scenes, renderer_spec, size, runs, seed, ref_times, baseline,
                             logs, tf_mode, scene_timeout, outputs)
    finally:
        workers.close()
        isolation.cleanup()
        if not isolation.cache_safe:
            renew_key()                  # the worker could read it: what it planted is worthless now


def _check_scenes(workers: Workers, rules: Rules, scenes: list[str], renderer_spec: str, size: int, runs: int,
                  seed: int | None, ref_times: str | None, baseline: str | None, logs_name: str,
                  tf_mode: str | None, scene_timeout: float, outputs: Outputs) -> bool:
    isolation = workers.isolation
    renderer = load_renderer(renderer_spec, isolation, size, workers.gpu)
    source = tf_source(ref_times, baseline, tf_mode, scenes, size, isolation)
    logs = prepare_logs(logs_name)
    cache = isolation.cache_safe
    time_seed = 0 if seed is None else seed
    seeds_text = f"seed {seed}" if seed is not None else "seed 0 and a random seed per scene"
    _say(f"renderer {renderer.name}, {rules.name} rules, {size}x{size}, {seeds_text}, {runs} runs")
    if source.notice:
        _say(source.notice)
    if isolation.confined:
        _say(isolation.describe())
    if renderer_spec == "auto" and source.live_name == renderer.name:
        _say(f"checking the {renderer.name} renderer against itself: give your renderer with "
             "-r path/to/file.py:Class")
    results = []
    for i, scene in enumerate(scenes, 1):
        def progress(text: str, scene: str = scene, i: int = i) -> None:
            _say(f"[{i}/{len(scenes)}] {scene}: {text}")
        seeds = correctness_seeds(seed, scene)
        res, ref, comparison = check_scene(workers, renderer, scene, size, seeds, time_seed, runs, progress,
                                           scene_timeout, cache)
        extra = source.output_cost.get(scene, 0.0)
        if res.t is not None and extra:             # the course's -f cost, in T as in Tf (check/timing.py)
            res.log.append(f"T: {res.t:.4f} ms measured, plus the course's -f cost {extra:.4f} ms")
            res.t += extra
            res.output_cost = extra
        tf_where = "not timed: the scene failed"
        if res.passed or scene in source.stored:
            def time_live(r: LoadedRenderer, scene: str = scene,
                          progress: Callable[[str], None] = progress) -> tuple[float | None, str]:
                progress(f"Tf: {runs} runs of {r.name}")
                return baseline_time(workers, r, scene, size, time_seed, runs, progress, scene_timeout, cache)
            res.tf, res.live, tf_where = source.tf(scene, time_live)
        res.tf_where = tf_where
        res.score = scene_score(rules, res.passed, res.t, res.tf)
        write_log(logs, res, comparison, renderer.name, size, seeds, tf_where)
        if comparison is not None and not res.passed:
            from circle_render.io.images import write_image
            write_image(logs / f"{scene}-mismatches.png", mismatch_picture(ref, comparison))
        verdict = "passed" if res.passed else f"FAILED ({res.reason})"
        if not res.passed and len(seeds) > 1:
            verdict += f"; reproduce with --scenes {scene} -S <seed> (seeds {seeds[0]} and {seeds[1]})"
        tf_text = "n/a" if res.tf is None else f"{res.tf:.4f}"
        progress(f"{verdict}; T {res.t if res.t is None else round(res.t, 4)} ms, "
                 f"Tf {tf_text} ms, score {res.score}")
        results.append(res)
    lines = [source.footer()]
    if any(r.tf is None for r in results):
        lines.append("n/a: no Tf (a failed scene is not timed against one; or the Tf renderer failed: see its log)")
    lines.append(timing_footer(workers))
    if isolation.confined:
        lines.append(isolation.describe())
    footer = "\n".join(line for line in lines if line)
    click.echo(render_table(rules, [r.row() for r in results], footer))
    _say(f"logs in {logs}/")
    if outputs.json or outputs.plot:
        from circle_render.check.result import check_record, write_record
        from circle_render.gpu import gpu_name
        record = check_record(renderer_spec=renderer_spec, renderer_name=renderer.name, user_class=renderer.isolated,
                              rules=rules, size=size, runs=runs, seed=seed, time_seed=time_seed, tf_mode=tf_mode,
                              gpu=gpu_name(), results=results, source=source, footer=footer,
                              isolation_mode=isolation.mode, isolation=isolation.describe())
        if outputs.json:
            write_record(record, outputs.json)
            _say(f"wrote the result to {outputs.json}")
        if outputs.plot:
            from circle_render.check.plot import plot_check
            plot_check(record, outputs.plot)
            _say(f"wrote its plot to {outputs.plot}")
    return all(r.passed for r in results)


def check_command(what: str, renderer_spec: str, rules: str, size: int, scenes: str | None, runs: int,
                  seed: int | None, ref_times: str | None, baseline: str | None, logs: str,
                  tf_mode: str | None = None, scene_timeout: float = 300.0, json_path: str | None = None,
                  plot_path: str | None = None) -> None:
    """``render check``: the renderer table, or the scan/find_repeats table; exits 1 if any
    scene or size was wrong."""
    if what != "render":
        if json_path or plot_path:
            raise UserError(f"--json and --plot go with render check of a renderer, not check {what}")
        from circle_render.commands.primitives import check_primitive
        sys.exit(check_primitive(what, rules, runs, 0 if seed is None else seed))
    outputs = Outputs.checked(json_path, plot_path)
    ok = run_check(renderer_spec, rules, size, scenes, runs, seed, ref_times, baseline, logs,
                   tf_mode, scene_timeout, outputs)
    sys.exit(0 if ok else 1)
