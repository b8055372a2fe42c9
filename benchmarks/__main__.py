"""One entry point for the benchmarks: ``python -m benchmarks SUBCOMMAND [options]`` (from the
repository root, on a machine with the GPU; each writes a JSON record, by convention under
benchmarks/results/, named GPU-KIND-COMMIT.json).

    bench      the course's method, every scene (Total = clear + advance + render): render bench
    frames     one frame's GPU time per scene (run once per source tree to compare trees)
    knobs      same-call A/B of the fast renderer's knobs and paths (variants declared as data)
    stages     each kernel's GPU time (stage probe) and what a launch costs the host
    supergrid  the draw against supertile grids, from host-made lists
    floors     each stage against the machine's floor (docs/floors.md)
    scaling    times against circle count and image size
    launch     launch and graph overheads, CuPy against the driver
    primitives SAXPY, scan, find_repeats
    kit        the assignment kit: the handout's ladder and pictures
    viewer     the viewer's GPU cost
    scenefiles .par / .circles loading
Device scripts (benchmarks/device/*.sh) batch these into one device call.
"""
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMANDS = {"frames": "frame_gpu.py", "knobs": "knobs.py", "stages": "stage_probe.py",
            "supergrid": "supergrid_probe.py", "floors": "floors.py", "scaling": "scaling.py",
            "launch": "launch_overhead.py", "primitives": "primitives_bench.py", "kit": "assignment_kit.py",
            "viewer": "viewer_cost.py", "scenefiles": "scene_files.py"}


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    command, rest = sys.argv[1], sys.argv[2:]
    if command == "bench":
        from circle_render.cli import main as render
        sys.argv = ["render", "bench", *rest]
        return render()
    if command not in COMMANDS:
        print(f"benchmarks: no subcommand {command!r}; one of: bench, {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    sys.argv = [str(HERE / COMMANDS[command]), *rest]
    sys.path.insert(0, str(HERE))         # as when the script is run by its path
    runpy.run_path(sys.argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
