"""Writing animations and pictures: whole `render` commands, end to end, side by side for one or
more source trees (alternating, min of --repeats), their peak memory, and the writer alone on the
same frames.

    python -m benchmarks output [--tree old=../old] [--cases draw,png,gif,mp4,webm,memory,encoder]
                                [-r cpu-fast] [-s 1024] [--frames 600] [-o RECORD.json]

Each case is a child process `render SCENE -r R -s S -b 0:N [-o FILE] -q` of that tree (its own
PYTHONPATH), timed by the wall clock from start to exit, so frames a second here is what a user
sees (Python start-up and the scene's set-up included). ``memory`` is the peak RSS of one picture
(os.wait4 of the child). ``encoder`` draws the frames first, holds them as 8-bit pictures, and
times the writer alone on them (this tree only: its io.output).
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from records import print_record  # noqa: E402  (benchmarks/records.py, beside this script)

from circle_render.timing.bench import current_commit  # noqa: E402
from circle_render.timing.timer import Stopwatch  # noqa: E402

SUFFIX = {"draw": None, "png": ".png", "gif": ".gif", "mp4": ".mp4", "webm": ".webm"}


def run_render(tree: Path, args: list[str], cwd: str) -> tuple[float, int, int, float]:
    """(wall seconds, peak RSS in bytes, exit status, CPU seconds) of one `render` command of
    ``tree`` (CPU seconds: user + system, every thread)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH")) if p)}
    code = "import sys; from circle_render.cli import main; main(sys.argv[1:])"
    with Stopwatch() as run:
        p = subprocess.Popen([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
    wall = run.s
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if p.returncode:
        print(f"output: {tree} {' '.join(args)}: exit {p.returncode}: {err.strip()[-300:]}", file=sys.stderr)
    return wall, usage.ru_maxrss * 1024, p.returncode, usage.ru_utime + usage.ru_stime


def clean(folder: str) -> None:
    for f in Path(folder).iterdir():
        f.unlink()


def encoder_alone(args, case: str) -> dict:
    """The writer of this tree alone: the frames drawn first and held as 8-bit pictures, then
    written as ``case`` (png, mp4, webm, gif) through io.output.open_output."""
    from circle_render import registry
    from circle_render.io.output import check_output, open_output
    from circle_render.io.pixels import frame_pixels
    from circle_render.scenes import make_scene
    r = registry.create(registry.resolve(args.renderer))
    r.load(make_scene(args.scene), args.size, args.size)
    frames = []
    for _ in range(args.frames):
        r.clear()
        r.advance()
        r.render()
        frames.append(frame_pixels(r).rgb_kept())
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / f"f{SUFFIX[case]}"
        with Stopwatch() as run, open_output(check_output(out, len(frames)), len(frames)) as sink:
            for k, rgb in enumerate(frames):
                sink.add(k, rgb)
        wall = run.s
    return {"wall_s": round(wall, 3), "fps": round(len(frames) / wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                    help="another source tree to time beside this one (repeatable)")
    ap.add_argument("--cases", default="draw,png,gif,mp4,webm,memory")
    ap.add_argument("--scene", default="snow")
    ap.add_argument("-r", "--renderer", default="cpu-fast")
    ap.add_argument("-s", "--size", type=int, default=1024)
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--gif-frames", type=int, default=100, help="GIFs are slow: fewer frames")
    ap.add_argument("--memory-size", type=int, default=8192)
    ap.add_argument("--memory-scene", default="rgb")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("-o", "--output")
    args = ap.parse_args()
    trees = {"this": ROOT, **{t.split("=", 1)[0]: Path(t.split("=", 1)[1]).resolve() for t in args.tree}}
    cases = args.cases.split(",")
    record = {"commit": current_commit(), "host": platform.node(), "cores": len(os.sched_getaffinity(0)),
              "load_average_before": os.getloadavg(),
              "scene": args.scene, "renderer": args.renderer, "size": args.size,
              "method": "whole command, wall clock from start to exit, min over repeats, trees alternating; "
                        "fps = frames / wall",
              "trees": {name: str(path) for name, path in trees.items()}, "cases": {}}
    with tempfile.TemporaryDirectory() as d:
        for tree in trees.values():                 # compile caches warm, outside the timing
            run_render(tree, [args.scene, "-r", args.renderer, "-s", "64", "-q"], d)
        for case in cases:
            if case in ("memory", "encoder"):
                continue
            n = args.gif_frames if case == "gif" else args.frames
            row = record["cases"].setdefault(case, {"frames": n})
            for _ in range(args.repeats):
                for name, tree in trees.items():
                    cmd = [args.scene, "-r", args.renderer, "-s", str(args.size), "-b", f"0:{n}", "-q"]
                    if SUFFIX[case]:
                        cmd += ["-o", f"f{SUFFIX[case]}"]
                    wall, rss, rc, cpu = run_render(tree, cmd, d)
                    clean(d)
                    if rc:
                        row[name] = {"error": f"exit {rc}"}
                        continue
                    best = row.get(name, {}).get("wall_s", float("inf"))
                    if wall < best:
                        row[name] = {"wall_s": round(wall, 3), "fps": round(n / wall, 2),
                                     "cpu_s": round(cpu, 2), "peak_rss_mb": round(rss / 2**20)}
                    row.setdefault("runs", {}).setdefault(name, []).append(round(wall, 3))
        if "memory" in cases:
            row = record["cases"].setdefault("memory", {"scene": args.memory_scene, "size": args.memory_size})
            float_mb = args.memory_size ** 2 * 16 / 2**20
            row["float_image_mb"], row["rgb8_image_mb"] = round(float_mb), round(float_mb * 3 / 16)
            for name, tree in trees.items():
                base = [args.memory_scene, "-r", args.renderer, "-s", str(args.memory_size), "-q"]
                _, draw_rss, _, _ = run_render(tree, base, d)
                wall, png_rss, rc, _ = run_render(tree, [*base, "-o", "big.png"], d)
                clean(d)
                row[name] = {"draw_only_peak_mb": round(draw_rss / 2**20), "png_peak_mb": round(png_rss / 2**20),
                             "png_wall_s": round(wall, 2),
                             "png_peak_over_float_plus_8bit": round(png_rss / 2**20 / (float_mb * 19 / 16), 2)}
    for case in cases:
        if case == "encoder":
            for kind in ("png", "mp4"):
                record["cases"].setdefault(f"encoder-alone-{kind}", {"frames": args.frames})["this"] = \
                    encoder_alone(args, kind)
    record["load_average_after"] = os.getloadavg()
    print_record(record, args.output)


if __name__ == "__main__":
    main()
