"""A student's course code scores here what the course's checker gives it (issue 35): in one GPU
run, each course-style original of examples/course_port/ (*_course.cu) is made into the whole
cudaRenderer.cu the course's harness takes (benchmarks/course_splice.py), built with the harness's
own Makefile and graded by the course's own checker.py, and its port (the .cu beside it and its
class in course_ports.py) is graded by `render check`, with stored Tf and with `--tf live`. Prints
per-scene tables, course checker against render check, under the CS149 rules (the checker's own)
and the CMU rules (derived from the same times: the CMU table's scenes are six of the eight, and
its points, 2 + 10 a scene, come from the same T and Tf by the same formula).

Needs the course's harness folder that ../shared/tools/course-harness/build.sh makes (--course,
default .course; carried to the GPU machine, never committed). The build and the checker run as
that folder's grade.sh runs them (the same make options, the same checker.py, the course's
reference binary timed live beside the student's), with the builds of all designs in parallel.

    python -m benchmarks course-fidelity --course .course -o fidelity.json            # every design
    python -m benchmarks course-fidelity --designs tiled_scan,tile_lists --tf stored    # fewer
    python -m benchmarks course-fidelity --refbin -o refbin.json    # the course's binary, -f or not
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PORTS = ROOT / "examples" / "course_port"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from course_splice import splice  # noqa: E402 - beside this script, on the path set just above

# design -> the port's class in course_ports.py (the original is PORTS/<design>_course.cu)
DESIGNS = {"tiled_scan": "TiledScanRenderer", "sort_by_tile": "SortByTileRenderer",
           "tile_lists": "TileListsRenderer", "tiled_exact": "TiledExactRenderer",
           "pixel_loop": "PixelLoopRenderer"}
CS149 = ("rgb", "rand10k", "rand100k", "pattern", "snowsingle", "biglittle", "rand1M", "micro2M")
CMU = ("rgb", "rand10k", "rand100k", "pattern", "snowsingle", "biglittle")
ALL_SCENES = ("rgb", "rgby", "rand10k", "rand100k", "rand1M", "micro2M", "pattern", "biglittle", "littlebig",
              "bouncingballs", "hypnosis", "fireworks", "snow", "snowsingle")
POINTS = {"cs149": (2, 7), "cmu": (2, 10)}                 # correctness, performance
ROW = re.compile(r"^\|\s*(\w+)\s*\|\s*([\d.]+)\**\s*\|\s*([\d.]+)?\s*(\(F\))?\s*\|\s*(\d+)\s*\|", re.MULTILINE)

LOG: list[str] = []
EXTRA: dict = {}        # --extra designs: name -> (original in the markers' form, "port.py:Class")


def say(*parts) -> None:
    line = " ".join(str(p) for p in parts)
    LOG.append(line)
    print(line, flush=True)


def score(rules: str, passed: bool, t: float | None, tf: float | None) -> int:
    """The course's formula (facts file; the CS149 checker.py's score_calculate)."""
    corr, perf = POINTS[rules]
    if not passed or t is None or tf is None:
        return 0
    if t <= 1.2 * tf:
        return corr + perf
    if t > 10 * tf:
        return corr
    return corr + math.ceil(perf * (tf / t))


def parse_table(text: str) -> dict:
    """{scene: (passed, T, Tf, points)} from a course-style score table (the checker's or ours)."""
    out = {}
    for m in ROW.finditer(text):
        scene, tf, t, failed, points = m.groups()
        out[scene] = (failed is None and t is not None, float(t) if t else None, float(tf), int(points))
    return out


# ---- the course's side ----

def cuda_lib_dir(course: Path) -> str:
    """Where libcudart.so is (as grade.sh looks for it)."""
    nvcc = shutil.which("nvcc")
    homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    if nvcc:
        homes.append(str(Path(nvcc).resolve().parent.parent))
    for home in filter(None, homes):
        for lib in ("lib64", "lib", "targets/x86_64-linux/lib"):
            if (Path(home) / lib / "libcudart.so").exists():
                return str(Path(home) / lib)
    return str(course / "link")


def build(course: Path, design: str, work: Path) -> tuple[str, Path, float, str]:
    """The whole cudaRenderer.cu for design, built in work/design with the harness's Makefile and
    grade.sh's options: (design, folder, seconds, error or "")."""
    start = time.monotonic()
    folder = work / design
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(course / "harness" / "render", folder)
    original = EXTRA[design][0] if design in EXTRA else PORTS / f"{design}_course.cu"
    whole = splice(original.read_text(), (course / "harness" / "render" / "cudaRenderer.cu").read_text(),
                   original.name)
    (folder / "cudaRenderer.cu").write_text(whole)
    (folder / "objs").mkdir(exist_ok=True)
    p = subprocess.run(["make", "-j4", f"CXXFLAGS=-O3 -Wall -g -I{course}/include",
                        f"LDFLAGS=-L{course}/link -L{cuda_lib_dir(course)} -Wl,-rpath-link,{course}/lib -lcudart"],
                       cwd=folder, capture_output=True, text=True, check=False)
    (folder / "build.log").write_text(p.stdout + p.stderr)
    return design, folder, time.monotonic() - start, "" if p.returncode == 0 else (p.stdout + p.stderr)[-2000:]


def prepare_runs(course: Path, folder: Path, snow_par: Path) -> None:
    """The reference binary beside the student's (through the harness's library wrapper) and
    the snowsingle file the checker's runs read."""
    ref = folder / "render_ref_x86"
    ref.write_text(f'#!/bin/sh\nexec {course}/run render_ref_x86 "$@"\n')
    ref.chmod(0o755)
    shutil.copy(snow_par, folder / "snow.par")


def run_checker(course: Path, folder: Path) -> tuple[dict, str, float]:
    """The course's checker.py in the build folder: ({scene: (passed, T, Tref, points)}, output, s)."""
    start = time.monotonic()
    env = {**os.environ, "LD_LIBRARY_PATH": f"{course}/lib:{cuda_lib_dir(course)}"}
    env.pop("GRADING_TOKEN", None)
    p = subprocess.run([sys.executable, "checker.py"], cwd=folder, capture_output=True, text=True, env=env, check=False)
    return parse_table(p.stdout), p.stdout + p.stderr, time.monotonic() - start


# ---- this project's side ----

def run_check(design: str, tf: str, logs: Path) -> tuple[dict, str, float]:
    """render check of the port, CS149 rules: ({scene: (passed, T, Tf, points)}, output, s)."""
    start = time.monotonic()
    port = EXTRA[design][1] if design in EXTRA else f"{PORTS / 'course_ports.py'}:{DESIGNS[design]}"
    cmd = [sys.executable, "-m", "circle_render", "check", "-q", "--rules", "cs149", "--logs", str(logs), "-r", port]
    if tf == "live":
        cmd += ["--tf", "live"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    return parse_table(p.stdout), p.stdout + p.stderr, time.monotonic() - start


# ---- tables ----

def table(design: str, rules: str, course: dict, checks: dict) -> tuple[str, dict]:
    """Per scene: the course checker's Tref, T, points, then each render check's Tf, T, points and
    the difference; totals. The CMU table is scored here from the same T and Tf."""
    scenes = CS149 if rules == "cs149" else CMU
    head = f"{'scene':<11}| {'course Tref':>11} {'T':>9} {'pts':>3} |" + "".join(
        f" {'Tf (' + k + ')':>14} {'T':>9} {'pts':>3} {'diff':>4} |" for k in checks)
    lines = [f"== {design}, {rules} rules" + ("" if rules == "cs149" else " (scored here from the same T and Tf)"),
             head, "-" * len(head)]
    totals = {"course": 0, **dict.fromkeys(checks, 0)}
    worst = dict.fromkeys(checks, 0)
    for scene in scenes:
        if scene not in course:
            lines.append(f"{scene:<11}| course checker gave no row")
            continue
        passed, t, tref, pts = course[scene]
        pts = pts if rules == "cs149" else score(rules, passed, t, tref)
        totals["course"] += pts
        row = f"{scene:<11}| {tref:11.4f} {t if t is not None else float('nan'):9.4f} {pts:3d} |"
        for k, got in checks.items():
            if scene not in got:
                row += f" {'(no row)':>14} {'':>9} {'':>3} {'':>4} |"
                continue
            cp, ct, ctf, cpts = got[scene]
            cpts = cpts if rules == "cs149" else score(rules, cp, ct, ctf)
            totals[k] += cpts
            worst[k] = max(worst[k], abs(cpts - pts))
            row += f" {ctf:14.4f} {ct if ct is not None else float('nan'):9.4f} {cpts:3d} {cpts - pts:+4d} |"
        lines.append(row + ("" if passed else "  (course: F)"))
    tot = f"{'total':<11}| {'':>11} {'':>9} {totals['course']:3d} |" + "".join(
        f" {'':>14} {'':>9} {totals[k]:3d} {totals[k] - totals['course']:+4d} |" for k in checks)
    lines += ["-" * len(head), tot]
    summary = {"course": totals["course"], **{k: {"total": totals[k], "diff": totals[k] - totals["course"],
                                                  "worst_scene_diff": worst[k]} for k in checks}}
    return "\n".join(lines), summary


def grade(a) -> dict:
    course, work = Path(a.course).resolve(), Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    for item in a.extra:
        name, _, rest = item.partition("=")
        original, _, port = rest.partition(":")
        port_file, _, cls = port.rpartition(":")
        EXTRA[name] = (Path(original).resolve(), f"{Path(port_file).resolve()}:{cls}")
    designs = [d for d in a.designs.split(",") if d] + list(EXTRA)
    unknown = [d for d in designs if d not in DESIGNS and d not in EXTRA]
    if unknown:
        raise SystemExit(f"unknown designs {unknown}; known: {', '.join(DESIGNS)}")
    snow_par = work / "snow.par"
    subprocess.run([sys.executable, "-m", "circle_render", "snowsingle", "--save-scene", str(snow_par), "-r", "cpu",
                    "-s", "8", "-q"], check=True, cwd=ROOT)
    warm = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "warm_reference_cache.py"), "--scenes",
                             ",".join(CS149), "-j", "8"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)                  # render check's references, while the harness builds
    with concurrent.futures.ThreadPoolExecutor(len(designs)) as pool:
        built = {d: r for d, *r in pool.map(lambda d: build(course, d, work), designs)}
    say(f"## reference cache: {warm.communicate()[1].strip()}")
    record: dict = {"designs": {}}
    texts = []
    for design in designs:
        folder, seconds, error = built[design]
        say(f"## {design}: built in {seconds:.0f} s" + (f": FAILED\n{error}" if error else ""))
        entry: dict = {"build_s": round(seconds, 1)}
        if error:
            record["designs"][design] = {**entry, "build_error": error}
            continue
        prepare_runs(course, folder, snow_par)
        course_rows, out, s = run_checker(course, folder)
        say(f"## {design}: the course's checker.py ({s:.0f} s)\n{out.strip()}")
        entry["course"] = {"rows": course_rows, "seconds": round(s, 1)}
        checks = {}
        for tf in a.tf.split(","):
            rows, out, s = run_check(design, tf, work / f"logs-{design}-{tf}")
            say(f"## {design}: render check --rules cs149 --tf {'auto' if tf == 'stored' else 'live'} ({s:.0f} s)\n"
                f"{out.strip()}")
            checks[tf] = rows
            entry[f"check_{tf}"] = {"rows": rows, "seconds": round(s, 1)}
        for rules in ("cs149", "cmu"):
            text, summary = table(design, rules, course_rows, checks)
            texts.append(text)
            entry[f"summary_{rules}"] = summary
        record["designs"][design] = entry
    record["tables"] = "\n\n".join(texts)
    return record


# ---- the course's binary, with and without -f ----

def refbin(a) -> dict:
    """The course's reference binary, `render -r cuda -b 0:4 SCENE -s 1024 [-f out]`, min of
    --runs, every scene: what the checker's -f (a file written after each timed frame) costs."""
    course, work = Path(a.course).resolve(), Path(a.work) / "refbin"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "circle_render", "snowsingle", "--save-scene", str(work / "snow.par"),
                    "-r", "cpu", "-s", "8", "-q"], check=True, cwd=ROOT)
    out: dict = {}
    for scene in ALL_SCENES:
        row = {}
        for label, extra in (("no -f", []), ("-f", ["-f", str(work / "output")])):
            totals = []
            for _ in range(a.runs):
                p = subprocess.run([str(course / "run"), "render_ref_x86", "-r", "cuda", "-b", "0:4", scene, "-s",
                                    "1024", *extra], cwd=work, capture_output=True, text=True, check=False)
                m = re.search(r"Total:\s*([\d.]+)", p.stdout)
                if m is None:
                    raise SystemExit(f"{scene} {label}: no Total line\n{p.stdout[-800:]}\n{p.stderr[-800:]}")
                totals.append(float(m.group(1)))
            row[label] = {"min": min(totals), "runs": totals}
        out[scene] = row
        say(f"{scene:<14} no -f {row['no -f']['min']:9.4f} ms   -f {row['-f']['min']:9.4f} ms   "
            f"(+{row['-f']['min'] - row['no -f']['min']:.4f})")
    return {"method": "Total line, -b 0:4 -s 1024, min of runs, the course's binary (.course/run render_ref_x86)",
            "runs": a.runs, "scenes": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True, help="the JSON record")
    ap.add_argument("--course", default=str(ROOT / ".course"), help="the harness folder build.sh made")
    ap.add_argument("--work", default="/tmp/course-fidelity", help="builds, logs and the checker's runs")
    ap.add_argument("--designs", default=",".join(d for d in DESIGNS if d != "pixel_loop"),
                    help=f"of {', '.join(DESIGNS)} (pixel_loop takes minutes a GPU: its own call)")
    ap.add_argument("--tf", default="stored,live", help="stored (the default Tf: stored where there are stored "
                    "times), live (--tf live), or both")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=ORIGINAL.cu:PORT.py:Class",
                    help="another design: its original (in the markers' form, course_splice.py) and its port")
    ap.add_argument("--refbin", action="store_true", help="time the course's binary with and without -f instead")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if not (Path(a.course) / "harness" / "render" / "Makefile").is_file():
        raise SystemExit(f"{a.course}: no harness (run ../shared/tools/course-harness/build.sh first)")
    from circle_render.gpu import gpu_name
    from circle_render.timing.bench import current_commit
    started = time.monotonic()
    record = {"gpu": gpu_name(), "commit": current_commit()}
    record.update(refbin(a) if a.refbin else grade(a))
    record["seconds"] = round(time.monotonic() - started, 1)
    Path(a.output).write_text(json.dumps(record, indent=1))
    Path(a.output).with_suffix(".log").write_text("\n".join(LOG) + "\n")
    if "tables" in record:
        print(f"\n# {record['gpu']}, commit {record['commit']}, {record['seconds']:.0f} s\n{record['tables']}")
        for design, entry in record["designs"].items():
            for rules in ("cs149", "cmu"):
                s = entry.get(f"summary_{rules}")
                if s:
                    print(f"{design:<13} {rules:<5} course {s['course']:2d}" + "".join(
                        f" | {k} {v['total']:2d} ({v['diff']:+d}, worst scene {v['worst_scene_diff']})"
                        for k, v in s.items() if k != "course"))


if __name__ == "__main__":
    main()
