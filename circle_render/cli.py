"""The ``render`` command: the options of every subcommand, declared here; the work is in
circle_render/commands/.

    render SCENE [options]      render one of the course's scenes (``render list`` names them)
    render list                 the scenes, one line each
    render check                the course's score table, for any renderer
    render bench                time every scene (GPU, or cpu-fast), write a JSON record and its plot
    render saxpy | scan         the assignment's GPU warm-ups
"""
from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any

import click

from circle_render import __version__, progress, registry
from circle_render.commands import bench as bench_cmd
from circle_render.commands import check as check_cmd
from circle_render.commands import compile as compile_cmd
from circle_render.commands import primitives as primitives_cmd
from circle_render.commands import scene as scene_cmd
from circle_render.errors import Interrupted, UserError
from circle_render.interrupts import ignore_late_interrupts, install_numba_safe, stop_resends
from circle_render.scenes import SCENE_NAMES, SCENES

MAX_SIZE = 16384
SEED_MAX = 2**32 - 1


def _complete_scene(ctx: click.Context, param: click.Parameter | None,
                    incomplete: str) -> list[click.shell_completion.CompletionItem]:
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


def _renderer_option(value: str, built_in: Sequence[str] = registry.CHOICES) -> str:
    """A built-in renderer name, or a user's ``module:Class`` / ``path/to/file.py:Class``."""
    try:
        return registry.check_name(value, tuple(built_in))
    except UserError as e:
        raise click.BadParameter(str(e)) from None


def _finite(value: float, name: str) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        raise click.BadParameter(f"{name} must be a finite number of seconds (1 or more), got {value}")
    return value


def _frames_option(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    return None if value is None else parse_frames(value)


class SceneGroup(click.Group):
    """A group whose unknown first word is a scene: ``render rgb`` means ``render scene rgb``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        own = [*ctx.help_option_names, "-V", "--version"]      # the group's own options
        if args and args[0] not in self.commands and args[0] not in own:
            args = ["scene", *args]
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[click.shell_completion.CompletionItem]:
        return super().shell_complete(ctx, incomplete) + _complete_scene(ctx, None, incomplete)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as e:       # past click, which would print a blank line first
            raise _Stopped() from e


class _Stopped(BaseException):
    """A command interrupted (Ctrl-C, SIGTERM, SIGHUP): the interrupt is its __cause__."""


@click.group(cls=SceneGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="render",
                      message="%(prog)s (circle-render) %(version)s")
def cli() -> None:
    """Render the course's ordered transparent circles on the CPU or a CUDA GPU.

    \b
    render SCENE [OPTIONS]   render a scene (see `render scene --help` for the options)
    render list              the scenes
    """


@cli.command("list")
def list_command() -> None:
    """List the scenes with one-line descriptions."""
    scene_cmd.list_scenes()


@cli.command("scene")
@click.argument("scene", metavar="SCENE", shell_complete=_complete_scene)
@click.option("-r", "--renderer", callback=lambda ctx, p, v: _renderer_option(v), default="auto",
              show_default=True, metavar="RENDERER",
              help="auto: cuda when a usable GPU is present, else cpu-fast; " + registry.describe() + "; "
                   "or your own class: module:Class or path/to/file.py:Class.")
@click.option("-s", "--size", type=click.IntRange(1, MAX_SIZE), default=1024, show_default=True,
              help="Image width and height in pixels.")
@click.option("-S", "--seed", type=click.IntRange(0, SEED_MAX), default=None, show_default="0",
              help="Seed for the course's rand() (0 acts as 1, as in glibc); course scenes only.")
@click.option("-b", "--bench", "frames", metavar="START:END", callback=_frames_option,
              help="Render frames [START, END) and print the course's per-frame Clear/Advance/"
                   "Render/Total times. Default: frame 0 only, no timing lines.")
@click.option("--frame", "frame", type=click.IntRange(0, None), metavar="N",
              help="Draw frame N (after N+1 animation steps, as -b N:N+1) and write only it, "
                   "to -o FILE as named; no timing lines.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the picture: .png, .ppm, .gif (one animated file), .mp4 (H.264) or "
                   ".webm (VP9) (video: pip install 'circle-render[video]'). With several frames, "
                   ".png/.ppm give STEM_0000.png, STEM_0001.png, ... Without -o nothing is "
                   "written: the scene is rendered and a one-line summary goes to stderr.")
@click.option("--fps", type=float, default=None, metavar="FPS",
              help="Frames a second of a .gif (at most 50), .mp4 or .webm.  [default: 30]")
@click.option("--codec", type=click.Choice(["h264", "vp9", "av1"], case_sensitive=False), default=None,
              help="The video codec: h264 (the default for .mp4), vp9 (the default for .webm), "
                   "av1 (either).")
@click.option("--crf", type=int, default=None, metavar="N",
              help="Video quality, lower is better: h264 0..51 (default 20), vp9 and av1 0..63 "
                   "(default 32 and 35).")
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
              help="With -i: save the last frame, at the picture's own size even where the window "
                   "scales it, to this file (.png, .ppm, or a one-frame .gif).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or notices on stderr, only errors.")
def scene_command(**options: Any) -> None:
    """Render SCENE: a name from `render list`, or a scene file (.par or .circles)."""
    scene_cmd.scene_command(**options)


@cli.command("bench")
@click.option("-r", "--renderer", "renderer_name", default="auto", show_default=True, metavar="RENDERER",
              callback=lambda ctx, p, v: _renderer_option(v),
              help="auto: cuda when a usable GPU is present, else cpu-fast; " + registry.describe()
                   + "; or your own class: module:Class or path/to/file.py:Class.")
@click.option("--scenes", default=",".join(SCENE_NAMES), show_default=False,
              help="Comma-separated scene names (default: all 14).")
@click.option("-s", "--size", type=click.IntRange(1, MAX_SIZE), default=1024, show_default=True)
@click.option("--runs", type=click.IntRange(1, 100), default=3, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="JSON record to write (default: MACHINE-RENDERER-SIZE-VERSION.json in benchmarks/results/ "
                   "if that folder is here, else in the current folder).")
@click.option("--plot", type=click.Path(dir_okay=False),
              help="PNG bar chart of the record (default: beside the record, same name, .png).")
@click.option("-q", "--quiet", is_flag=True, help="No progress or notices on stderr, only the table and errors.")
def bench_command(**options: Any) -> None:
    """Time every scene the course's way (after a warm-up frame; CUDA events too on a GPU) and
    write a JSON record and its plot."""
    bench_cmd.bench_command(**options)


@cli.command("check")
@click.argument("what", type=click.Choice(("render", "scan", "find_repeats")), default="render", required=False)
@click.option("-r", "--renderer", "renderer_spec", default="auto", show_default=True, metavar="RENDERER",
              help=f"A built-in renderer ({', '.join(registry.CHOICES)}) or your own class: "
                   "module:Class or path/to/file.py:Class (interface: circle_render/interface.py); "
                   "your class runs in a worker process per scene.")
@click.option("--rules", type=click.Choice(["cmu", "cs149"]), default="cmu", show_default=True,
              help="cmu: 6 scenes x 12 points; cs149: 8 scenes x 9 points (72 in all).")
@click.option("-s", "--size", type=click.IntRange(1, MAX_SIZE), default=1024, show_default=True)
@click.option("--scenes", help="Comma-separated scenes to check instead of the rules' scenes.")
@click.option("--runs", type=click.IntRange(1, 100), default=3, show_default=True)
@click.option("-S", "--seed", type=click.IntRange(0, SEED_MAX), default=None,
              help="Check and time at this seed only. Default: time at seed 0; check at seed 0 "
                   "and at a random seed per scene (printed when a scene fails).")
@click.option("--ref-times", "ref_times", type=click.Path(dir_okay=False),
              help="JSON file of reference times Tf in ms ({\"rgb\": 0.0545, ...}).")
@click.option("--baseline", help="Measure Tf live with this renderer (same forms as --renderer), unscaled.")
@click.option("--tf", "tf_mode", type=click.Choice(["auto", "live"]), default=None,
              help="auto (default): the course's stored times on the GPU model and size they were "
                   "measured on, elsewhere cuda-tiled timed live and scaled by its ratio to the "
                   "course's binary; live: that calibrated live Tf even where times are stored.")
@click.option("--scene-timeout", type=click.FloatRange(1, None), default=300, show_default=True,
              callback=lambda ctx, p, v: _finite(v, "--scene-timeout"),
              help="Seconds your renderer may take per scene (check and timing) before it gets (F).")
@click.option("--logs", type=click.Path(file_okay=False), default="logs", show_default=True,
              help="Folder for a log per scene and, for a failed scene, a PNG of its mismatches.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), metavar="FILE.json",
              help="Also write the whole result as JSON: per scene T, Tf and where it came from, the "
                   "course's -f cost, score, pass/fail, seeds; the GPU, rules, isolation, version.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), metavar="FILE.png",
              help="Also draw each scene's T against its Tf over the points each ratio scores (PNG).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr, only the table and errors.")
def check_command(quiet: bool, **options: Any) -> None:
    """The course's score table: correctness, time and score per scene (or per scan size).

    \b
    render check                       the renderer, CMU rules, 1024x1024
    render check -r mine.py:Renderer   your own renderer class
    render check scan | find_repeats   the scan checker (needs a GPU)
    """
    progress.set_quiet(quiet)
    check_cmd.check_command(**options)


@cli.command("compile")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--arch", default="compute_75", show_default=True,
              help="Virtual architecture to compile for (the GPU path uses the GPU's own).")
@click.option("-D", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="A macro of your own, as a renderer's `defines = {NAME: VALUE}` passes it.")
@click.option("--option", "options", multiple=True, metavar="OPTION",
              help="A compiler option of your own, as a renderer's `compile_options` passes it "
                   "(e.g. --option=--fmad=false).")
def compile_command(files: tuple[str, ...], arch: str, defines: tuple[str, ...], options: tuple[str, ...]) -> None:
    """Compile kernel files (or those a renderer's .py compiles, with its classes' defines and
    compile_options) exactly as the GPU path will: the same source (headers inlined) and
    options (the course's: multiply-adds fused), with NVRTC (CuPy's compiler). No GPU needed.

    \b
    render compile assignment/my_renderer.cu
    render compile assignment/my_renderer.py
    """
    compile_cmd.compile_command(files, arch, defines, options)


@cli.command("saxpy")
@click.option("-n", "--n", "n", type=click.IntRange(1, 1 << 30), default=100_000_000, show_default=True,
              help="Number of float32 elements.")
def saxpy_command(n: int) -> None:
    """SAXPY (a*x + y) on the GPU: the course's timing line, the kernel alone, and the copy
    bandwidth of the same bytes for comparison."""
    primitives_cmd.saxpy_command(n)


@cli.command("scan")
@click.option("-m", "--mode", type=click.Choice(["scan", "find_repeats"]), default="scan", show_default=True)
@click.option("-i", "--input", "kind", type=click.Choice(["random", "ones"]), default="random",
              show_default=True, help="random: int32 values 0..9; ones: all 1.")
@click.option("-n", "--n", "n", type=click.IntRange(0, 2**31 - 1), default=64 * 1024 * 1024, show_default=True)
@click.option("--cub", is_flag=True, help="Time CuPy's CUB scan instead (mode scan only).")
@click.option("-S", "--seed", type=click.IntRange(0, SEED_MAX), default=None, show_default="0",
              help="Seed of the random input (-i random only).")
def scan_command(mode: str, kind: str, n: int, cub: bool, seed: int | None) -> None:
    """Exclusive scan or find_repeats of int32 on the GPU: device time (min of 3, input already
    on the GPU), checked against NumPy."""
    primitives_cmd.scan_command(mode, kind, n, cub, seed)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def _signals_as_interrupts() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Interrupted, as Ctrl-C raises KeyboardInterrupt, while the
    command runs; a signal already ignored (nohup's SIGHUP) stays ignored; none of them is
    raised inside numba's run-time code (interrupts.py)."""
    names = ("SIGTERM", "SIGHUP")
    previous = {}
    for sig in (getattr(signal, n) for n in names if hasattr(signal, n)):
        with contextlib.suppress(ValueError):        # not the main thread: leave them alone
            if signal.getsignal(sig) == signal.SIG_DFL:
                previous[sig] = signal.signal(sig, _raise_interrupted)
    safe = install_numba_safe()                      # never raised inside numba's own code
    try:
        yield
    finally:
        for sig, handler in {**safe, **previous}.items():   # the originals last
            signal.signal(sig, handler)


def _interrupted(e: BaseException, own_process: bool = False) -> None:
    """Ctrl-C, SIGTERM or SIGHUP: say what was written and exit with 128 + the signal
    (``own_process``: the ``render`` process, whose later interrupts are then ignored)."""
    if own_process:
        ignore_late_interrupts()         # first: a signal from here on cannot raise again
    signum = getattr(e, "signum", signal.SIGINT)
    if progress.end_line() is None and signum == signal.SIGINT and progress.on_terminal(sys.stderr):
        click.echo("", err=True)         # after the terminal's ^C
    done = getattr(e, "done", None)
    what = f" after writing {done}" if done else "; no partial output was written"
    click.echo(f"render: interrupted{what}", err=True)
    stop_resends()                       # one interrupt, one exit: no late copy of it
    sys.exit(128 + int(signum))


def _error(text: str, code: int = 2) -> None:
    progress.end_line()                  # never on a progress bar's line
    click.echo(f"render: error: {_one_line(text)}", err=True)
    sys.exit(code)


def main(argv: Sequence[str] | None = None, own_process: bool = False) -> None:
    """Entry point: user errors (click's and ours) become one line on stderr with exit code 2;
    bare ``render`` prints the help; Ctrl-C, SIGTERM and SIGHUP exit with 128 + the signal
    (``own_process``: the ``render`` process itself, __main__.py, which then ignores later ones)."""
    progress.set_quiet(False)              # until a command's --quiet says otherwise
    try:
        with _signals_as_interrupts():
            rv = cli.main(args=argv, prog_name="render", standalone_mode=False)
    except click.exceptions.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError":        # click >= 8.2: bare `render`
            click.echo(e.ctx.get_help() if e.ctx is not None else "Usage: render")
            sys.exit(0)
        _error(e.format_message())
    except UserError as e:
        _error(str(e))
    except _Stopped as e:
        _interrupted(e.__cause__ or e, own_process)
    except click.exceptions.Abort as e:                     # click's wrapping of KeyboardInterrupt
        progress.forget_line()                              # (click has ended the line)
        _interrupted(e.__cause__ or e, own_process)
    except click.ClickException as e:
        _error(e.format_message(), e.exit_code)
    except KeyboardInterrupt as e:
        _interrupted(e, own_process)
    except OSError as e:
        _error(f"{e.strerror or e}: {e.filename or ''}".rstrip(": "))
    except Exception as e:
        if type(e).__name__ == "OutOfMemoryError":       # cupy.cuda.memory.OutOfMemoryError
            where = "the GPU"
        elif isinstance(e, MemoryError):
            where = "host memory"
        else:
            raise
        _error(f"{where} ran out of memory ({_one_line(str(e)) or 'MemoryError'}); "
               "try a smaller --size" + (" or -r cpu" if where == "the GPU" else ""))
    sys.exit(rv if isinstance(rv, int) else 0)
