"""One entry point for the benchmarks: ``python -m benchmarks SUBCOMMAND [options]``, from the
repository root (``SUBCOMMAND --help`` for its options). Each times with the package's one timer
(circle_render/timing/timer.py) and writes a record, by convention under benchmarks/results/,
which keeps the latest record of each kind (git keeps the rest). Device scripts
(benchmarks/device/*.sh) batch subcommands into one device call.
"""
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# subcommand -> (script in benchmarks/, what it does); "bench" is `render bench` itself
COMMANDS = {
    "bench": (None, "the course's method, every scene (Total = clear + advance + render): render bench"),
    "frames": ("frame_gpu.py", "one frame's GPU time per scene (run once per source tree to compare trees)"),
    "knobs": ("knobs.py", "same-call A/B of the fast renderer's knobs and paths (variants declared as data)"),
    "stages": ("stage_probe.py", "each kernel's GPU time (stage probe) and what a launch costs the host"),
    "supergrid": ("supergrid_probe.py", "the draw against supertile grids, from host-made lists"),
    "rates": ("rates.py", "the machine's ceilings: copy bandwidth, FMA, SFU and atomic rates"),
    "floors": ("floors.py", "each stage against the machine's floor (docs/floors.md; CPU, from records)"),
    "scaling": ("scaling.py", "times against circle count and image size"),
    "launch": ("launch_overhead.py", "launch and graph overheads, CuPy against the driver"),
    "primitives": ("primitives_bench.py", "SAXPY, scan, find_repeats against a copy and CUB"),
    "scan-shapes": ("scan_variants.py", "the device-wide scan's tile shapes against CUB"),
    "kit": ("assignment_kit.py", "the assignment kit: the handout's ladder and pictures"),
    "course-ports": ("course_port_graph.py", "the handout's launch-cost lesson: course ports, Python vs graph"),
    "course-helpers": ("course_helpers.py", "course_compat.cuh's helpers against the course's facts"),
    "course-fidelity": ("course_fidelity.py", "course originals by the course's checker beside their ports"),
    "course-splice": ("course_splice.py", "the whole cudaRenderer.cu of a course-style original"),
    "viewer": ("viewer_cost.py", "the viewer's GPU cost"),
    "output": ("output.py", "writing frames: PNG sequences, GIF, video, end to end and the writer alone; peak memory"),
    "scenefiles": ("scene_files.py", ".par / .circles saving and loading (CPU)"),
    "cpu-peers": ("cpu_peers.py", "cpu-fast against the CPU libraries and -r cpu (CPU)"),
    "canvas": ("canvas.py", "a Canvas frame by frame: on the GPU, NumPy in and RGBA8 out beside pygfx, render(), "
                            "cpu-fast beside a naive loop, memory"),
    "transfer": ("transfer_ab.py", "large arrays to and from the GPU: CuPy's copies against page-locked lanes"),
    "api-peers": ("api_peers.py", "render() with the drawing options against the CPU drawing libraries (CPU)"),
    "cpu-knobs": ("cpu_knobs.py", "same-run A/B of cpu-fast's knobs under each threading layer (CPU)"),
    "drawing-gpu": ("drawing_gpu.py", "the CUDA drawing paths: options swept against -r cpu, anti-aliasing's cost"),
    "gpu-check": ("gpu_check.py", "correctness sweep of a CUDA renderer: sizes, seeds, every scene"),
    "warm-cache": ("warm_reference_cache.py", "fill render check's reference cache, a process per scene (CPU)"),
    "calibrate-tf": ("calibrate_tf.py", "store cuda-tiled's ratio to the course's binary from a same-call record"),
    "ptxas": ("ptxas_report.py", "registers and spills of a kernel file's kernels (nvcc, no GPU)"),
    "profile": ("profile_kernels.py", "each kernel of a frame once, outside graphs: a target for Nsight Compute"),
    "plot": ("plot.py", "bar chart of a bench record against the course's times (docs/bench.png)"),
    "plot-scaling": ("plot_scaling.py", "log-log plots of a scaling record (docs/scaling.png)"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    return (__doc__ + "\nSubcommands:\n" +
            "\n".join(f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"benchmarks: no subcommand {command!r}; one of: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    script = COMMANDS[command][0]
    if script is None:
        from circle_render.cli import main as render
        return render(["bench", *rest]) or 0
    sys.argv = [str(HERE / script), *rest]
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))         # as when the script is run by its path
    runpy.run_path(sys.argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
