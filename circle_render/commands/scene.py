"""``render SCENE``: render a course scene or a scene file to a picture, time it the course's
way (``-b``), check it against the reference (``-c``), save its circles, or view it (``-i``);
and ``render list``."""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from circle_render import registry
from circle_render.drawing.support import check_drawer, command_renderer
from circle_render.errors import UserError
from circle_render.interface import Renderer
from circle_render.io.images import IMAGE_SUFFIXES, VIDEO_SUFFIXES, OutputError, check_output_path, write_text
from circle_render.io.output import Output, check_output, open_output
from circle_render.io.pixels import FramePixels, frame_pixels
from circle_render.io.scene_files import SUFFIXES as SCENE_SUFFIXES
from circle_render.progress import Progress, announce_compiles, notice, set_quiet
from circle_render.scenes import SCENE_NAMES, SCENES, make_scene
from circle_render.scenes.scene import Scene
from circle_render.timing.timer import Stopwatch


def list_scenes() -> None:
    """``render list``: the scenes with one-line descriptions."""
    width = max(map(len, SCENE_NAMES))
    for name in SCENE_NAMES:
        click.echo(f"{name:<{width}}  {SCENES[name].description}")


def pick_renderer(name: str, progress: bool = True, say: bool = True) -> Any:
    """Create the renderer for ``-r`` (a built-in name or a user's ``module:Class`` /
    ``path/to/file.py:Class``); ``auto`` without a GPU says so on stderr (unless ``say`` is
    False: a run that draws nothing)."""
    if say:
        _say_if_auto_falls_back(name)
    resolved = registry.resolve(name)
    return registry.create(resolved, **({"progress": progress} if resolved == "cpu" else {}))


def _say_if_auto_falls_back(name: str) -> None:
    from circle_render.gpu import no_gpu_notice
    if name == "auto":
        text = no_gpu_notice(registry.resolve(name))
        if text:
            notice(f"render: {text}")


def load_scene_arg(word: str, seed: int | None) -> Scene:
    """The Scene named on the command line: a course scene (with ``seed``) or a scene file."""
    if word in SCENES:
        return make_scene(word, seed or 0)
    from circle_render.io.scene_files import is_scene_file_name, load_scene
    if not is_scene_file_name(word):
        raise UserError(f"unknown scene {word!r}; accepted: {', '.join(SCENE_NAMES)}, "
                        "or a scene file (.par, .circles)")
    if seed is not None:
        raise UserError(f"-S/--seed picks the circles of a course scene; the scene file {word!r} "
                        "has its own (drop -S)")
    return load_scene(word)


def refuse_idle_options(interactive: bool, frames: tuple[int, int] | None, output: str | None, check: bool,
                        view_frames: int | None, screenshot: str | None) -> None:
    """Options that would do nothing in the mode asked for are refused, not ignored."""
    if interactive:
        idle = [name for name, given in (("-o", output), ("-b", frames), ("-c", check)) if given]
        if idle:
            raise UserError(f"{', '.join(idle)} {'does' if len(idle) == 1 else 'do'} nothing with -i "
                            "(the viewer draws in a window; --screenshot FILE saves a frame): drop "
                            f"{'it' if len(idle) == 1 else 'them'} or -i")
    elif view_frames is not None or screenshot is not None:
        raise UserError("--frames and --screenshot go with -i (the viewer)")


def scene_command(scene: str, renderer: str, size: int, seed: int | None, frames: tuple[int, int] | None,
                  output: str | None, check: bool, interactive: bool, save_to: str | None,
                  view_frames: int | None, screenshot: str | None, quiet: bool = False, frame: int | None = None,
                  fps: float | None = None, codec: str | None = None, crf: int | None = None) -> None:
    """Render SCENE (the options are the ``render SCENE`` ones, parsed by cli.py). Every input
    is checked before anything is written: the options, the scene, the paths, the video's
    codec, the renderer (and, with -i, the display)."""
    set_quiet(quiet)
    refuse_idle_options(interactive, frames, output, check, view_frames, screenshot)
    if frame is not None and frames is not None:
        raise UserError("give -b START:END (frames, timed) or --frame N (one frame, written), not both")
    circles = load_scene_arg(scene, seed)
    seed = seed or 0
    start, end = frames or ((frame, frame + 1) if frame is not None else (0, 1))
    if output is None and (fps is not None or codec is not None or crf is not None):
        given = next(n for n, v in (("--fps", fps), ("--codec", codec), ("--crf", crf)) if v is not None)
        raise UserError(f"{given} goes with -o FILE (.gif, .mp4, .webm)")
    checked = check_output(output, end - start, fps, codec, crf) if output is not None else None
    out = check_output_path(output, frames=end - start) if output is not None else None
    renderer = command_renderer(renderer, circles, out, interactive)   # a scene file's drawing options
    alpha = circles.drawing is not None and not circles.drawing.opaque  # the picture keeps its alpha
    saved = _scene_to_save(circles, save_to, start) if save_to is not None else None
    if interactive:
        _view(circles, renderer, size, seed, view_frames, screenshot, saved)
        return
    only_save = saved is not None and out is None and frames is None and frame is None and not check
    r = pick_renderer(renderer, say=not only_save)     # checked even when it will not draw
    check_drawer(r, circles.drawing)
    if only_save and saved is not None:
        _write_scene(*saved, [])                  # only the file was asked for: no rendering
        return
    announce_compiles()
    if frames is not None:                        # start-up outside the timed frames
        from circle_render.timing.frames import warm_up
        warm_ms = 1e3 * warm_up(lambda: pick_renderer(registry.resolve(renderer), say=False), circles, size)
    r.load(circles, size, size)
    ref = None
    if check:
        ref = registry.create("cpu")
        ref.load(circles, size, size)
        for _ in range(start):
            ref.advance()
    written: list[Path] = []
    failures = 0
    sink = open_output(checked, end - start, fps) if checked is not None else None
    if sink is not None and output is not None and size % 2 and output.lower().endswith(VIDEO_SUFFIXES):
        notice(f"render: {size}x{size} padded to {size + 1}x{size + 1} in the video (its 4:2:0 colour "
               "needs even sizes; the last row and column repeat)")
    bar = Progress(f"rendering {scene}", end - start, enabled=end - start > 1, unit="frames", rate=True)
    try:
        if saved is not None:
            _write_scene(*saved, written)
        with contextlib.ExitStack() as stack:
            if sink is not None:
                stack.enter_context(sink)

            def on_frame(k: int) -> None:
                nonlocal failures
                img = r.get_image() if ref is not None else None
                if ref is not None:
                    failures += not _check_frame(ref, img, k)
                if sink is not None:
                    sink.add(k, FramePixels(img, owned=True, alpha=alpha) if img is not None
                             else frame_pixels(r, alpha))
                bar.update(k - start + 1)

            from circle_render.timing.frames import run_frames
            with Stopwatch() as run:
                times = run_frames(r, start, end, on_frame)
            elapsed = run.s
        bar.close()
    except KeyboardInterrupt as e:               # Ctrl-C, SIGTERM, SIGHUP: say what is there
        e.done = _written_summary(written, sink)  # type: ignore[attr-defined]  # read by cli._interrupted
        raise
    except OutputError as e:                     # a full disk part way: say what is there
        done = _written_summary(written, sink)
        if done:
            raise OutputError(f"{e}; written before it: {done}") from e
        raise
    if sink is not None:
        notice(f"render: wrote {sink.wrote()}")
    if frames is not None:
        notice(f"render: {getattr(r, 'name', type(r).__name__)}, {scene} at {size}x{size}, frames "
               f"{start}:{end}, mean per frame; start-up left out (an untimed warm-up frame on a "
               f"renderer of its own ran first, {warm_ms:.1f} ms)")
        click.echo(times.report())                # stdout: the course's four lines, as its binary prints them
    if output is None and frames is None and not check:
        notice(f"render: rendered {scene} at {size}x{size} with {r.name} in {elapsed:.3f} s; "
               "nothing written (use -o FILE to save it)")
    if failures:
        sys.exit(1)


def _written_summary(written: list[Path], sink: Output | None) -> str | None:
    """What an interrupted run left behind, for its last line: the scene file, the frames."""
    parts = [str(p) for p in written]
    frames = sink.summary() if sink is not None else None
    if frames:
        parts.append(frames)
    return " and ".join(parts) or None


def _view(circles: Scene, renderer: str, size: int, seed: int, frames: int | None, screenshot: str | None,
          saved: tuple[Path, str, str] | None) -> None:
    """``-i``: the viewer, with a summary line on stderr when it ends; the scene file (if
    asked for) is written once the first frame is on screen."""
    from circle_render.display.viewer import (
        ViewerState,
        available_renderers,
        check_display,
        run_viewer,
        viewer_scenes,
    )
    if screenshot is not None:
        check_output_path(screenshot, (*IMAGE_SUFFIXES, ".gif"))    # a one-frame GIF too
    check_display()
    _say_if_auto_falls_back(renderer)
    first = registry.resolve(renderer)
    if first != "cpu":
        pick_renderer(first)                      # a clear error now if it cannot run
    scenes, index = viewer_scenes(circles.name, circles.copy, seed)
    state = ViewerState(scenes, available_renderers(first), size, index=index)
    pending = [saved] if saved is not None else []

    def save_once(state: Any, window: Any) -> None:
        while pending:
            _write_scene(*pending.pop(), [])
    with Stopwatch() as shown:
        state = run_viewer(state, frames=frames, screenshot=screenshot, on_frame=save_once)
    secs = shown.s
    t = state.times
    notice(f"viewer: {state.shown} frames in {secs:.2f} s, {state.steady_fps():.1f} FPS after the "
           "first; last frame ms: " + ", ".join(f"{p} {t[p]:.2f}" for p in t))


def _scene_to_save(scene: Scene, path: str, start: int) -> tuple[Path, str, str]:
    """(path, text, what it holds) of ``scene`` as it is drawn in frame ``start`` (after that frame's animation
    step), checked now; written by ``_write_scene`` once the run is known to be valid."""
    from circle_render.cpu.animation import advance
    from circle_render.io.scene_files import scene_text
    p = check_output_path(path, SCENE_SUFFIXES, "scene file")
    drawn = scene.copy()
    for _ in range(start + 1):
        advance(drawn)
    return p, scene_text(drawn, p.suffix.lower()), f"{drawn.n} circles as drawn in frame {start}"


def _write_scene(path: Path, text: str, what: str, written: list[Path]) -> None:
    write_text(path, text)
    written.append(path)
    notice(f"render: wrote {path} ({what})")


def _check_frame(ref: Renderer, img: Any, k: int) -> bool:
    """Render frame k with the reference and compare; print the course-style verdict."""
    from circle_render.course import compare
    ref.clear()
    ref.advance()
    ref.render()
    result = compare(ref.get_image(), img)
    for (x, y, c), a, b in list(zip(result.mismatches.tolist(), result.reference, result.actual))[:10]:
        click.echo(f"Mismatch detected at pixel ({x}, {y}) channel {'rgb'[c]}: "
                   f"expected {a:.4f}, got {b:.4f}")
    if result.passed:
        click.echo(f"Frame {k}: correctness check passed ({result.count} mismatches, "
                   f"largest |difference| {result.max_abs_diff:.2e})")
        return True
    click.echo(f"Frame {k}: correctness check FAILED: {result.count} mismatches (more than 5)")
    return False
