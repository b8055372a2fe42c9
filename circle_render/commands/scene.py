"""``render SCENE``: render a course scene or a scene file to a picture, time it the course's
way (``-b``), check it against the reference (``-c``), save its circles, or view it (``-i``);
and ``render list``."""
from __future__ import annotations

import sys
import time

import click

from circle_render import registry
from circle_render.cpu.shading import to_bytes
from circle_render.errors import UserError
from circle_render.io.images import check_output_path, frame_path, write_gif, write_image
from circle_render.scenes import SCENE_NAMES, SCENES, make_scene


def list_scenes() -> None:
    """``render list``: the scenes with one-line descriptions."""
    width = max(map(len, SCENE_NAMES))
    for name in SCENE_NAMES:
        click.echo(f"{name:<{width}}  {SCENES[name].description}")


def pick_renderer(name: str, progress: bool = True):
    """Create the renderer for ``-r``; ``auto`` without a GPU says so on stderr."""
    from circle_render.gpu import gpu_status
    resolved = registry.resolve(name)
    if name == "auto" and not gpu_status()[0]:
        click.echo(f"render: no usable GPU ({gpu_status()[1]}); using the {resolved} renderer", err=True)
    return registry.create(resolved, **({"progress": progress} if resolved == "cpu" else {}))


def load_scene_arg(word: str, seed: int):
    """The Scene named on the command line: a course scene (with ``seed``) or a scene file."""
    if word in SCENES:
        return make_scene(word, seed)
    from circle_render.io.scene_files import is_scene_file_name, load_scene
    if not is_scene_file_name(word):
        raise UserError(f"unknown scene {word!r}; accepted: {', '.join(SCENE_NAMES)}, "
                        "or a scene file (.par, .circles)")
    return load_scene(word)


def scene_command(scene, renderer, size, seed, frames, output, check, interactive, save_to,
                  view_frames, screenshot) -> None:
    """Render SCENE (the options are the ``render SCENE`` ones, parsed by cli.py)."""
    circles = load_scene_arg(scene, seed)
    out = check_output_path(output) if output is not None else None
    if save_to is not None:
        _save_scene(circles, save_to, (frames or (0, 1))[0])
    if interactive:
        _view(circles, renderer, size, seed, view_frames, screenshot)
        return
    if view_frames is not None or screenshot is not None:
        raise UserError("--frames and --screenshot go with -i (the viewer)")
    start, end = frames or (0, 1)
    r = pick_renderer(renderer)
    r.load(circles, size, size)
    ref = None
    if check:
        ref = registry.create("cpu")
        ref.load(circles, size, size)
        for _ in range(start):
            ref.advance()
    gif_frames, failures = [], 0

    def on_frame(k):
        nonlocal failures
        img = None
        if out is not None or ref is not None:
            img = r.get_image()
        if ref is not None:
            failures += not _check_frame(ref, img, k)
        if out is not None:
            pixels = to_bytes(img)
            if out.suffix.lower() == ".gif":
                gif_frames.append(pixels)
            else:
                write_image(out if end - start == 1 else frame_path(out, k), pixels)

    from circle_render.timing.frames import run_frames
    t0 = time.perf_counter()
    times = run_frames(r, start, end, on_frame)
    elapsed = time.perf_counter() - t0
    if gif_frames:
        write_gif(out, gif_frames)
    if frames is not None:
        click.echo(times.report())
    if out is None and frames is None and not check:
        click.echo(f"render: rendered {scene} at {size}x{size} with {r.name} in {elapsed:.3f} s; "
                   "nothing written (use -o FILE to save it)", err=True)
    if failures:
        sys.exit(1)


def _view(circles, renderer, size, seed, frames, screenshot) -> None:
    """``-i``: the viewer, with a summary line on stderr when it ends."""
    from circle_render.display.viewer import ViewerState, available_renderers, run_viewer, viewer_scenes
    if screenshot is not None:
        check_output_path(screenshot)
    first = registry.resolve(renderer)
    if first != "cpu":
        pick_renderer(first)                      # a clear error now if it cannot run
    scenes, index = viewer_scenes(circles.name, circles.copy, seed)
    state = ViewerState(scenes, available_renderers(first), size, index=index)
    t0 = time.perf_counter()
    state = run_viewer(state, frames=frames, screenshot=screenshot)
    secs = time.perf_counter() - t0
    t = state.times
    click.echo(f"viewer: {state.shown} frames in {secs:.2f} s, {state.steady_fps():.1f} FPS after the "
               "first; last frame ms: " + ", ".join(f"{p} {t[p]:.2f}" for p in t), err=True)


def _save_scene(scene, path: str, start: int) -> None:
    """Save ``scene`` as it is drawn in frame ``start`` (after that frame's animation step)."""
    from circle_render.cpu.animation import advance
    from circle_render.io.scene_files import SUFFIXES, save_scene
    p = check_output_path(path, SUFFIXES, "scene file")
    drawn = scene.copy()
    for _ in range(start + 1):
        advance(drawn)
    save_scene(drawn, p)


def _check_frame(ref, img, k) -> bool:
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
