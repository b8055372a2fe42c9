"""The ``render`` command.

    render SCENE [options]      render one of the course's scenes (``render list`` names them)
    render list                 the scenes, one line each
    render bench                time every scene (GPU), write a JSON record
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from circle_render.scenes import SCENE_NAMES, SCENES, make_scene

from circle_render import registry
from circle_render.io.images import OutputError, check_output_path, frame_path, write_gif, write_image
from circle_render.cpu.shading import to_bytes

MAX_SIZE = 16384
SEED_MAX = 2**32 - 1


class CliError(click.ClickException):
    """A user error: one line on stderr, exit code 2."""

    exit_code = 2


def _complete_scene(ctx, param, incomplete):
    return [click.shell_completion.CompletionItem(n, help=SCENES[n].description)
            for n in SCENE_NAMES if n.startswith(incomplete)]


def parse_frames(text: str) -> tuple[int, int]:
    """'START:END' -> (start, end) with 0 <= start < end."""
    parts = text.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        start, end = int(parts[0]), int(parts[1])
    except ValueError:
        raise click.BadParameter(f"expected START:END (two integers, e.g. 0:4), got {text!r}") from None
    if start < 0 or end <= start:
        raise click.BadParameter(f"expected START:END with 0 <= START < END, got {text!r}")
    return start, end


def _frames_option(ctx, param, value):
    return None if value is None else parse_frames(value)


class SceneGroup(click.Group):
    """A group whose unknown first word is a scene: ``render rgb`` means ``render scene rgb``."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["scene", *args]
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx, incomplete):
        return super().shell_complete(ctx, incomplete) + _complete_scene(ctx, None, incomplete)


@click.group(cls=SceneGroup, context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """Render the course's ordered transparent circles on the CPU or a CUDA GPU.

    \b
    render SCENE [OPTIONS]   render a scene (see `render scene --help` for the options)
    render list              the scenes
    """


@cli.command("list")
def list_scenes():
    """List the scenes with one-line descriptions."""
    width = max(map(len, SCENE_NAMES))
    for name in SCENE_NAMES:
        click.echo(f"{name:<{width}}  {SCENES[name].description}")


def pick_renderer(name: str, progress: bool = True):
    """Create the renderer for ``-r``; ``auto`` without a GPU says so on stderr."""
    from circle_render.gpu import gpu_status
    if name == "auto" and not gpu_status()[0]:
        click.echo(f"render: no usable GPU ({gpu_status()[1]}); using the cpu renderer", err=True)
    resolved = registry.resolve(name)
    try:
        kwargs = {"progress": progress} if resolved == "cpu" else {}
        return registry.create(resolved, **kwargs)
    except registry.RendererUnavailable as e:
        raise CliError(str(e)) from None


@cli.command("scene")
@click.argument("scene", metavar="SCENE", shell_complete=_complete_scene)
@click.option("-r", "--renderer", type=click.Choice(registry.CHOICES), default="auto", show_default=True,
              help="auto: cuda when a usable GPU is present, else cpu.")
@click.option("-s", "--size", type=click.IntRange(1, MAX_SIZE), default=1024, show_default=True,
              help="Image width and height in pixels.")
@click.option("-S", "--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True,
              help="Seed for the course's rand() (0 acts as 1, as in glibc).")
@click.option("-b", "--bench", "frames", metavar="START:END", callback=_frames_option,
              help="Render frames [START, END) and print the course's per-frame Clear/Advance/"
                   "Render/Total times. Default: frame 0 only, no timing lines.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the picture: .png, .ppm, or .gif (one animated file). With several "
                   "frames, .png/.ppm give STEM_0000.png, STEM_0001.png, ... Without -o nothing "
                   "is written: the scene is rendered and a one-line summary goes to stderr.")
@click.option("-c", "--check", is_flag=True,
              help="Also render with the cpu reference and compare by the course's rule "
                   "(r, g, b within 0.1; more than 5 mismatches fails, exit code 1).")
@click.option("-i", "--interactive", is_flag=True,
              help="Show the scene animating in a window (keys: h for help, q to quit).")
@click.option("--save-scene", "save_to", type=click.Path(dir_okay=False),
              help="Write the circles as drawn in the first rendered frame to FILE: .circles "
                   "(this project's format, with colours and shading) or .par (the course's, "
                   "snow shading only). The file re-renders to the same picture.")
@click.option("--frames", "view_frames", type=click.IntRange(1, None),
              help="With -i: quit after this many frames (for scripts and timing).")
@click.option("--screenshot", type=click.Path(dir_okay=False),
              help="With -i: save the last frame as displayed (read back from the window) to this PNG.")
def scene_command(scene, renderer, size, seed, frames, output, check, interactive, save_to,
                  view_frames, screenshot):
    """Render SCENE: a name from `render list`, or a scene file (.par or .circles)."""
    circles = load_scene_arg(scene, seed)
    out = None
    if output is not None:
        try:
            out = check_output_path(output)
        except OutputError as e:
            raise CliError(str(e)) from None
    if save_to is not None:
        _save_scene(circles, save_to, (frames or (0, 1))[0])
    if interactive:
        _view(scene, circles, renderer, size, seed, view_frames, screenshot)
        return
    if view_frames is not None or screenshot is not None:
        raise CliError("--frames and --screenshot go with -i (the viewer)")
    start, end = frames or (0, 1)
    r = pick_renderer(renderer)
    try:
        r.load(circles, size, size)
    except registry.RendererUnavailable as e:
        raise CliError(str(e)) from None
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

    t0 = time.perf_counter()
    times = _run(r, start, end, on_frame)
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


def _view(word, circles, renderer, size, seed, frames, screenshot) -> None:
    """``-i``: the viewer, with a summary line on stderr when it ends."""
    from circle_render.display.viewer import ViewerError, ViewerState, available_renderers, run_viewer, viewer_scenes
    if screenshot is not None:
        try:
            check_output_path(screenshot)
        except OutputError as e:
            raise CliError(str(e)) from None
    first = registry.resolve(renderer)
    if first != "cpu":
        pick_renderer(first)                      # a clear error now if it cannot run
    scenes, index = viewer_scenes(circles.name, circles.copy, seed)
    state = ViewerState(scenes, available_renderers(first), size, index=index)
    t0 = time.perf_counter()
    try:
        state = run_viewer(state, frames=frames, screenshot=screenshot)
    except ViewerError as e:
        raise CliError(str(e)) from None
    secs = time.perf_counter() - t0
    t = state.times
    click.echo(f"viewer: {state.shown} frames in {secs:.2f} s, {state.steady_fps():.1f} FPS after the "
               "first; last frame ms: " + ", ".join(f"{p} {t[p]:.2f}" for p in t), err=True)


def load_scene_arg(word: str, seed: int):
    """The Scene named on the command line: a course scene (with ``seed``) or a scene file."""
    if word in SCENES:
        return make_scene(word, seed)
    from circle_render.io.scene_files import SceneFileError, is_scene_file_name, load_scene
    if not is_scene_file_name(word):
        raise CliError(f"unknown scene {word!r}; accepted: {', '.join(SCENE_NAMES)}, "
                       "or a scene file (.par, .circles)")
    try:
        return load_scene(word)
    except SceneFileError as e:
        raise CliError(str(e)) from None


def _save_scene(scene, path: str, start: int) -> None:
    """Save ``scene`` as it is drawn in frame ``start`` (after that frame's animation step)."""
    from circle_render.io.scene_files import SUFFIXES, save_scene
    from circle_render.cpu.animation import advance
    try:
        p = check_output_path(path, SUFFIXES, "scene file")
    except OutputError as e:
        raise CliError(str(e)) from None
    drawn = scene.copy()
    for _ in range(start + 1):
        advance(drawn)
    try:
        save_scene(drawn, p)
    except ValueError as e:
        raise CliError(str(e)) from None


def _run(r, start, end, on_frame):
    from circle_render.timing.frames import run_frames
    return run_frames(r, start, end, on_frame)


def _check_frame(ref, img, k) -> bool:
    """Render frame k with the reference and compare; print the course-style verdict."""
    from circle_render.check import compare
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


def main(argv=None) -> None:
    """Entry point: click's errors become one line on stderr with exit code 2."""
    try:
        rv = cli.main(args=argv, prog_name="render", standalone_mode=False)
    except click.exceptions.UsageError as e:
        click.echo(f"render: error: {' '.join(e.format_message().split())}", err=True)
        sys.exit(2)
    except click.ClickException as e:
        click.echo(f"render: error: {' '.join(e.format_message().split())}", err=True)
        sys.exit(e.exit_code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        click.echo("\nrender: interrupted; no partial output was written", err=True)
        sys.exit(130)
    except OSError as e:
        click.echo(f"render: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), err=True)
        sys.exit(2)
    except Exception as e:
        if type(e).__name__ == "OutOfMemoryError":       # cupy.cuda.memory.OutOfMemoryError
            where = "the GPU"
        elif isinstance(e, MemoryError):
            where = "host memory"
        else:
            raise
        click.echo(f"render: error: {where} ran out of memory ({' '.join(str(e).split()) or 'MemoryError'}); "
                   "try a smaller --size" + (" or -r cpu" if where == "the GPU" else ""), err=True)
        sys.exit(2)
    sys.exit(rv if isinstance(rv, int) else 0)


@cli.command("bench")
@click.option("-r", "--renderer", "renderer_name", type=click.Choice([n for n in registry.RENDERERS if n != "cpu"]),
              default="cuda", show_default=True)
@click.option("--scenes", default=",".join(SCENE_NAMES), show_default=False,
              help="Comma-separated scene names (default: all 14).")
@click.option("-s", "--size", type=click.IntRange(1, MAX_SIZE), default=1024, show_default=True)
@click.option("--runs", type=click.IntRange(1, 100), default=3, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="JSON record to write (default: benchmarks/results/GPU-RENDERER-COMMIT.json).")
def bench_command(renderer_name, scenes, size, runs, output):
    """Time every scene on the GPU (course method and CUDA events) and write a JSON record."""
    from circle_render.timing.bench import format_table, run_bench, write_record
    from circle_render.gpu import gpu_status
    names = [s for s in scenes.split(",") if s]
    unknown = [s for s in names if s not in SCENES]
    if unknown:
        raise CliError(f"unknown scene {unknown[0]!r}; accepted: {', '.join(SCENE_NAMES)}")
    if not gpu_status()[0]:
        raise CliError(f"render bench needs a CUDA GPU: {gpu_status()[1]}")
    record = run_bench(renderer_name, names, size, runs=runs,
                       progress=lambda n: click.echo(f"bench: {n}", err=True))
    if output is None:
        slug = "".join(ch if ch.isalnum() else "-" for ch in (record["gpu"] or "gpu")).strip("-")
        output = Path("benchmarks/results") / f"{slug}-{renderer_name}-{size}-{record['commit'][:10]}.json"
    write_record(record, output)
    click.echo(format_table(record))
    click.echo(f"wrote {output}", err=True)


CHECK_KINDS = ("render", "scan", "find_repeats")


@cli.command("check")
@click.argument("what", type=click.Choice(CHECK_KINDS), default="render", required=False)
@click.option("-r", "--renderer", "renderer_spec", default="auto", show_default=True,
              help="A built-in renderer (auto, cpu, cuda, cuda-tiled) or your own class: "
                   "module:Class or path/to/file.py:Class (interface: renderer/base.py).")
@click.option("--rules", type=click.Choice(["cmu", "cs149"]), default="cmu", show_default=True,
              help="cmu: 6 scenes x 12 points; cs149: 8 scenes x 9 points (72 in all).")
@click.option("-s", "--size", type=click.IntRange(1, MAX_SIZE), default=1024, show_default=True)
@click.option("--scenes", help="Comma-separated scenes to check instead of the rules' scenes.")
@click.option("--runs", type=click.IntRange(1, 100), default=3, show_default=True)
@click.option("-S", "--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True)
@click.option("--ref-times", "ref_times", type=click.Path(dir_okay=False),
              help="JSON file of reference times Tf in ms ({\"rgb\": 0.0545, ...}).")
@click.option("--baseline", help="Measure Tf live with this renderer (same forms as --renderer).")
@click.option("--logs", type=click.Path(file_okay=False), default="logs", show_default=True,
              help="Folder for a log per scene and, for a failed scene, a PNG of its mismatches.")
def check_command(what, renderer_spec, rules, size, scenes, runs, seed, ref_times, baseline, logs):
    """The course's score table: correctness, time and score per scene (or per scan size).

    \b
    render check                       the renderer, CMU rules, 1024x1024
    render check -r mine.py:Renderer   your own renderer class
    render check scan | find_repeats   the scan checker (needs a GPU)
    """
    if what != "render":
        from circle_render.primitives_cli import check_primitive
        sys.exit(check_primitive(what, rules, runs, seed))
    from circle_render.check_command import run_check
    from circle_render.checker import PluginError
    try:
        ok = run_check(renderer_spec, rules, size, scenes, runs, seed, ref_times, baseline, logs)
    except PluginError as e:
        raise CliError(str(e)) from None
    sys.exit(0 if ok else 1)


@cli.command("saxpy")
@click.option("-n", "--n", "n", type=click.IntRange(1, 1 << 30), default=100_000_000, show_default=True,
              help="Number of float32 elements.")
def saxpy_command(n):
    """SAXPY (a*x + y) on the GPU: the course's timing line, the kernel alone, and the copy
    bandwidth of the same bytes for comparison."""
    from circle_render.primitives_cli import require_gpu, saxpy_report
    require_gpu("render saxpy")
    r = saxpy_report(n)
    click.echo(f"Effective BW by CUDA saxpy: {r['overall_ms']:.3f} ms\t\t[{r['overall_gbps']:.3f} GB/s]")
    click.echo(f"Kernel only:                {r['kernel_ms']:.3f} ms\t\t[{r['kernel_gbps']:.3f} GB/s] "
               f"= {100 * r['kernel_gbps'] / r['copy_gbps']:.0f}% of a device-to-device copy "
               f"({r['copy_gbps']:.1f} GB/s)")
    if not r["correct"]:
        click.echo("saxpy: the result differs from NumPy's float32 a*x + y", err=True)
        sys.exit(1)


@cli.command("scan")
@click.option("-m", "--mode", type=click.Choice(["scan", "find_repeats"]), default="scan", show_default=True)
@click.option("-i", "--input", "kind", type=click.Choice(["random", "ones"]), default="random",
              show_default=True, help="random: int32 values 0..9; ones: all 1.")
@click.option("-n", "--n", "n", type=click.IntRange(0, 2**31 - 1), default=64 * 1024 * 1024, show_default=True)
@click.option("--cub", is_flag=True, help="Time CuPy's CUB scan instead (mode scan only).")
@click.option("-S", "--seed", type=click.IntRange(0, SEED_MAX), default=0, show_default=True)
def scan_command(mode, kind, n, cub, seed):
    """Exclusive scan or find_repeats of int32 on the GPU: device time (min of 3, input already
    on the GPU), checked against NumPy."""
    from circle_render.primitives_cli import make_input, require_gpu, run_primitive
    if cub and mode != "scan":
        raise CliError("--cub times CuPy's scan; it has no find_repeats (use -m scan)")
    require_gpu("render scan")
    ms, wrong = run_primitive(mode, make_input(kind, n, seed), use_cub=cub)
    what = "CUB scan" if cub else mode
    click.echo(f"GPU_time: {ms:.3f} ms  ({what}, {n} elements, {kind} input; "
               f"{2 * 4 * n / ms / 1e6 if ms > 0 else 0:.1f} GB/s of int32 read + written)")
    label = "Scan" if mode == "scan" else "Find_repeats"
    if wrong is None:
        click.echo(f"{label} outputs are correct!")
    else:
        click.echo(f"{label} outputs are WRONG: first wrong element at index {wrong}")
        sys.exit(1)
