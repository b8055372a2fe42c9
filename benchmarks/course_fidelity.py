"""A student's course code scores here what the course's checker gives it (issue 35): in one GPU
run, each course-style original of examples/course_port/ (*_course.cu) is made into the whole
cudaRenderer.cu the course's harness takes (benchmarks/course_splice.py), built with the harness's
own Makefile and graded by the course's own checker.py, and its port (the .cu beside it and its
class in course_ports.py, the same program: examples/course_port/README.md) is graded by ONE
`render check --tf live --json` run. T is measured once; that run's record carries, per scene,
the calibrated live Tf and the Tf the course's stored time gives (what `render check` uses by
default on a GPU with stored times), each with the course's -f cost as the check adds it, so both
tables come from the same T. Every score is course.scene_score's: the CS149 table (the checker's
own rules) and the CMU one (six of the eight scenes, 2 + 10 points, from the same times).

The proof (issue 35): per design and rules, the totals within 2 points of the course's checker
and every scene within 1; printed as PASS or FAIL under the tables. Also printed per scene: the
live Tf against the course's live reference time (how well the calibration followed this
session) and the port's T against the original's.

Needs the course's harness folder that ../shared/tools/course-harness/build.sh makes (--course,
default .course; carried to the GPU machine, never committed). The build and the checker run as
that folder's grade.sh runs them (the same make options, the same checker.py, the course's
reference binary timed live beside the student's), the builds of all designs in parallel.
About 100 s a design on an H100 (the course's checker about 55, render check about 40).

    python -m benchmarks course-fidelity --course .course -o fidelity.json           # every design
    python -m benchmarks course-fidelity --designs tiled_scan,sort_by_tile -o a.json  # fewer
    python -m benchmarks course-fidelity --build-only --work /tmp/cf                  # compile only (no GPU)
    python -m benchmarks course-fidelity --refbin -o refbin.json    # the course's binary, -f or not
    python -m benchmarks course-fidelity --designs tile_lists --no-f -o a.json  # originals without -f too

--no-f also times each original's own binary as the checker does but without -f (min of 3):
the column 'port/orig no -f' is then the port's measured T over it, two programs compared with
no model of the -f cost between them (render check adds the course binary's -f cost per scene).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
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
sys.path.insert(0, str(ROOT))
from course_splice import splice  # noqa: E402 - beside this script, on the path set just above

from circle_render.course import RULES, scene_score  # noqa: E402

# design -> the port's class in course_ports.py (the original is PORTS/<design>_course.cu)
DESIGNS = {"tiled_scan": "TiledScanRenderer", "sort_by_tile": "SortByTileRenderer",
           "tile_lists": "TileListsRenderer", "tiled_exact": "TiledExactRenderer"}
ALL_SCENES = ("rgb", "rgby", "rand10k", "rand100k", "rand1M", "micro2M", "pattern", "biglittle", "littlebig",
              "bouncingballs", "hypnosis", "fireworks", "snow", "snowsingle")
ROW = re.compile(r"^\|\s*(\w+)\s*\|\s*([\d.]+)\**\s*\|\s*([\d.]+)?\s*(\(F\))?\s*\|\s*(\d+)\s*\|", re.MULTILINE)
RUNS = re.compile(r"^\[(\w+)\] (Student|Reference) times:\s*\[([^\]]*)\]", re.MULTILINE)
SCENE_TOLERANCE, TOTAL_TOLERANCE = 1, 2          # issue 35's proof: every scene within 1 point, totals within 2

LOG: list[str] = []
EXTRA: dict = {}        # --extra designs: name -> (original in the markers' form, "port.py:Class")
STARTED = time.monotonic()


def say(*parts) -> None:
    line = " ".join(str(p) for p in parts)
    LOG.append(line)
    print(line, flush=True)


def parse_checker(text: str) -> dict:
    """{scene: {passed, t, tref, points, t_runs, tref_runs}} from the course's checker.py output."""
    out: dict = {}
    for m in ROW.finditer(text):
        scene, tref, t, failed, points = m.groups()
        out[scene] = {"passed": failed is None and t is not None, "t": float(t) if t else None,
                      "tref": float(tref), "points": int(points)}
    for m in RUNS.finditer(text):
        scene, who, values = m.groups()
        if scene in out:
            runs = [float(v) for v in values.split(",") if v.strip()]
            out[scene]["t_runs" if who == "Student" else "tref_runs"] = runs
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


def original_of(design: str) -> Path:
    return EXTRA[design][0] if design in EXTRA else PORTS / f"{design}_course.cu"


def port_of(design: str) -> str:
    return EXTRA[design][1] if design in EXTRA else f"{PORTS / 'course_ports.py'}:{DESIGNS[design]}"


def build(course: Path, design: str, work: Path) -> tuple[str, Path, float, str]:
    """The whole cudaRenderer.cu for design, built in work/design with the harness's Makefile and
    grade.sh's options, the headers beside the original copied beside it: (design, folder,
    seconds, error or "")."""
    start = time.monotonic()
    folder = work / design
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(course / "harness" / "render", folder)
    original = original_of(design)
    for header in original.parent.glob("*.cuh"):
        shutil.copy(header, folder / header.name)
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
    """The course's checker.py in the build folder: (parse_checker's rows, output, seconds)."""
    start = time.monotonic()
    env = {**os.environ, "LD_LIBRARY_PATH": f"{course}/lib:{cuda_lib_dir(course)}"}
    env.pop("GRADING_TOKEN", None)
    p = subprocess.run([sys.executable, "checker.py"], cwd=folder, capture_output=True, text=True, env=env, check=False)
    return parse_checker(p.stdout), p.stdout + p.stderr, time.monotonic() - start


def time_without_f(course: Path, folder: Path, scenes: tuple[str, ...], runs: int = 3) -> dict:
    """The original's binary timed as the checker times it, less -f: {scene: min Total ms}."""
    env = {**os.environ, "LD_LIBRARY_PATH": f"{course}/lib:{cuda_lib_dir(course)}"}
    env.pop("GRADING_TOKEN", None)
    out: dict = {}
    for scene in scenes:
        totals = []
        for _ in range(runs):
            p = subprocess.run([str(folder / "render"), "-r", "cuda", "-b", "0:4", scene, "-s", "1024"], cwd=folder,
                               capture_output=True, text=True, env=env, check=False)
            m = re.search(r"Total:\s*([\d.]+)", p.stdout)
            if m:
                totals.append(float(m.group(1)))
        out[scene] = {"min": min(totals) if totals else None, "runs": totals}
    return out


# ---- this project's side ----

def run_check(design: str, work: Path) -> tuple[dict | None, str, float]:
    """ONE render check of the port, CS149 rules, --tf live: (its --json record or None, output, s)."""
    start = time.monotonic()
    out = work / f"check-{design}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "circle_render", "check", "-q", "--rules", "cs149", "--tf", "live",
           "--logs", str(work / f"logs-{design}"), "--json", str(out), "-r", port_of(design)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)
    record = json.loads(out.read_text()) if out.is_file() else None
    return record, p.stdout + p.stderr, time.monotonic() - start


# ---- tables: every score from course.scene_score ----

def _f(t: float | None, width: int = 9) -> str:
    return f"{'-':>{width}}" if t is None else f"{t:{width}.4f}"


def table(design: str, rules_name: str, course: dict, check: dict, no_f: dict | None = None) -> tuple[str, dict]:
    """Per scene: the course checker's Tref, T and points (its own under CS149; course.scene_score's
    from its T and Tref under CMU); render check's T, and its points
    against the stored Tf and the live Tf (the difference to the course's points); the live Tf over
    the course's live Tref, and the port's T over the original's (each with -f); with ``no_f`` (the
    original timed without -f: time_without_f) the port's measured T over that too. Totals."""
    rules = RULES[rules_name]
    kinds = [k for k in ("stored", "live") if any(s.get(f"tf_{k}_ms") is not None for s in check["scenes"])]
    by_scene = {s["scene"]: s for s in check["scenes"]}
    head = (f"{'scene':<11}| {'course Tref':>11} {'T':>9} {'pts':>3} | {'check T':>9} |"
            + "".join(f" {'Tf ' + k:>10} {'pts':>3} {'diff':>4} |" for k in kinds)
            + f" {'live/Tref':>9} {'T port/orig':>11}" + (f" {'port/orig no -f':>15}" if no_f else ""))
    lines = [f"== {design}, {rules_name} rules"
             + ("" if rules_name == "cs149" else " (scored from the same T and Tf)"), head, "-" * len(head)]
    totals = {"course": 0, **dict.fromkeys(kinds, 0)}
    worst = dict.fromkeys(kinds, 0)
    missing = []
    for scene in rules.scenes:
        c, s = course.get(scene), by_scene.get(scene)
        if c is None or s is None:
            missing.append(scene)
            lines.append(f"{scene:<11}| " + ("course checker gave no row" if c is None else "render check gave no row"))
            continue
        ours = scene_score(rules, c["passed"], c["t"], c["tref"])
        pts = c["points"] if rules_name == "cs149" else ours    # the checker's own verdict where it gives one
        totals["course"] += pts
        row = f"{scene:<11}| {c['tref']:11.4f} {_f(c['t'])} {pts:3d} | {_f(s['t_ms'])} |"
        for k in kinds:
            tf = s.get(f"tf_{k}_ms")
            got = scene_score(rules, s["passed"], s["t_ms"], tf)
            totals[k] += got
            worst[k] = max(worst[k], abs(got - pts))
            row += f" {_f(tf, 10)} {got:3d} {got - pts:+4d} |"
        live = s.get("tf_live_ms")
        row += f" {live / c['tref'] if live else float('nan'):9.3f}"
        row += f" {s['t_ms'] / c['t'] if s['t_ms'] and c['t'] else float('nan'):11.3f}"
        if no_f:
            plain = (no_f.get(scene) or {}).get("min")
            row += f" {s['t_measured_ms'] / plain if plain and s.get('t_measured_ms') else float('nan'):15.3f}"
        lines.append(row + ("" if c["passed"] else "  (course: F)") + ("" if s["passed"] else "  (check: F)")
                     + ("" if ours == pts else f"  (course.scene_score gives {ours})"))
    tot = f"{'total':<11}| {'':>11} {'':>9} {totals['course']:3d} | {'':>9} |" + "".join(
        f" {'':>10} {totals[k]:3d} {totals[k] - totals['course']:+4d} |" for k in kinds)
    lines += ["-" * len(head), tot]
    summary: dict = {"course": totals["course"], "missing": missing}
    for k in kinds:
        diff = totals[k] - totals["course"]
        summary[k] = {"total": totals[k], "diff": diff, "worst_scene_diff": worst[k],
                      "proof": not missing and abs(diff) <= TOTAL_TOLERANCE and worst[k] <= SCENE_TOLERANCE}
    return "\n".join(lines), summary


def self_spread(entry: dict) -> str:
    """The course's checker graded the same build more than once (--course-repeats): per scene
    and rules, its points in each run, and the widest spread: how far the course agrees with itself."""
    runs = [entry["course"]["rows"], *entry["course_repeats"]]
    lines, spreads = [], {}
    for rules_name in ("cs149", "cmu"):
        rules = RULES[rules_name]
        totals: list = [0] * len(runs)          # None: a run lacked a scene
        widest = 0
        for scene in rules.scenes:
            pts: list = []
            for i, rows in enumerate(runs):
                c = rows.get(scene)
                if c is None:                         # that run gave no row: shown as '-', its total marked
                    pts.append("-")
                    totals[i] = None
                    continue
                p = c["points"] if rules_name == "cs149" else scene_score(rules, c["passed"], c["t"], c["tref"])
                pts.append(p)
                if totals[i] is not None:
                    totals[i] += p
            got = [p for p in pts if p != "-"]
            widest = max(widest, max(got) - min(got)) if got else widest
            lines.append(f"  {rules_name:<5} {scene:<11} points {pts}  T/Tref "
                         + " ".join(f"{r[scene]['t'] / r[scene]['tref']:.3f}" if scene in r and r[scene]['t'] else "-"
                                    for r in runs))
        spreads[rules_name] = {"totals": totals, "widest_scene": widest}
        lines.append(f"  {rules_name:<5} totals {totals}, widest scene spread {widest}")
    entry["course_self_spread"] = spreads
    return "\n".join(lines)


def summary_lines(record: dict) -> list[str]:
    out = []
    for design, entry in record["designs"].items():
        for rules in ("cs149", "cmu"):
            s = entry.get(f"summary_{rules}")
            if not s:
                out.append(f"{design:<13} {rules:<5} no table: {entry.get('error', 'see the log')}")
                continue
            out.append(f"{design:<13} {rules:<5} course {s['course']:2d}" + "".join(
                f" | {k} {v['total']:2d} ({v['diff']:+d}, worst scene {v['worst_scene_diff']}): "
                f"{'PASS' if v['proof'] else 'FAIL'}" for k, v in s.items() if isinstance(v, dict)))
    return out


def grade(a, record: dict, output: Path) -> None:
    course, work = Path(a.course).resolve(), Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    designs = [d for d in a.designs.split(",") if d] + list(EXTRA)
    unknown = [d for d in designs if d not in DESIGNS and d not in EXTRA]
    if unknown:
        raise SystemExit(f"unknown designs {unknown}; known: {', '.join(DESIGNS)}")
    warm, snow_par = None, work / "snow.par"
    if not a.build_only:
        subprocess.run([sys.executable, "-m", "circle_render", "snowsingle", "--save-scene", str(snow_par), "-r",
                        "cpu", "-s", "8", "-q"], check=True, cwd=ROOT)
        warm = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "warm_reference_cache.py"), "--scenes",
                                 ",".join(RULES["cs149"].scenes), "-j", "8"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)   # render check's references, while it builds
    with concurrent.futures.ThreadPoolExecutor(len(designs)) as pool:
        built = {d: r for d, *r in pool.map(lambda d: build(course, d, work), designs)}
    if warm is not None:
        say(f"## reference cache: {warm.communicate()[1].strip()}")
    record["designs"] = {}
    texts = []
    for design in designs:
        folder, seconds, error = built[design]
        say(f"## {design}: built in {seconds:.0f} s" + (f": FAILED\n{error}" if error else "")
            + f" ({time.monotonic() - STARTED:.0f} s in)")
        entry: dict = {"build_s": round(seconds, 1)}
        record["designs"][design] = entry
        if error:
            entry["error"] = "the build failed"
            entry["build_error"] = error
            continue
        if a.build_only:
            continue
        prepare_runs(course, folder, snow_par)
        course_rows, out, s = run_checker(course, folder)
        say(f"## {design}: the course's checker.py ({s:.0f} s)\n{out.strip()}")
        entry["course"] = {"rows": course_rows, "seconds": round(s, 1)}
        if a.course_repeats:
            entry["course_repeats"] = [run_checker(course, folder)[0] for _ in range(a.course_repeats)]
            say(f"## {design}: the course's checker against itself\n" + self_spread(entry))
        if a.no_f:
            started = time.monotonic()
            entry["course_no_f"] = time_without_f(course, folder, RULES["cs149"].scenes)
            say(f"## {design}: its binary without -f ({time.monotonic() - started:.0f} s): "
                + ", ".join(f"{k} {v['min']}" for k, v in entry["course_no_f"].items()))
        check, out, s = run_check(design, work)
        say(f"## {design}: render check --rules cs149 --tf live --json ({s:.0f} s)\n{out.strip()}")
        entry["check"] = {"record": check, "seconds": round(s, 1)}
        if check is None:
            entry["error"] = "render check wrote no record"
            continue
        for rules in ("cs149", "cmu"):
            text, summary = table(design, rules, course_rows, check, entry.get("course_no_f"))
            texts.append(text)
            entry[f"summary_{rules}"] = summary
        record["tables"] = "\n\n".join(texts)
        write(record, output)                              # what is done survives a later timeout


def write(record: dict, output: Path) -> None:
    record["seconds"] = round(time.monotonic() - STARTED, 1)
    output.write_text(json.dumps(record, indent=1))
    output.with_suffix(".log").write_text("\n".join(LOG) + "\n")


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
    ap.add_argument("-o", "--output", help="the JSON record (and a .log beside it)")
    ap.add_argument("--course", default=str(ROOT / ".course"), help="the harness folder build.sh made")
    ap.add_argument("--work", default="/tmp/course-fidelity", help="builds, logs and the checker's runs")
    ap.add_argument("--designs", default=",".join(DESIGNS), help=f"of {', '.join(DESIGNS)} (about 100 s each)")
    ap.add_argument("--extra", action="append", default=[], metavar="NAME=ORIGINAL.cu:PORT.py:Class",
                    help="another design: its original (in the markers' form, course_splice.py) and its port")
    ap.add_argument("--build-only", action="store_true", help="build the originals in the harness and stop "
                    "(no GPU needed: a build error found here costs no device time)")
    ap.add_argument("--no-f", action="store_true", help="also time each original's binary without -f (min of 3, "
                    "about 30 s a design): the port over the original with no model of the -f cost between them")
    ap.add_argument("--refbin", action="store_true", help="time the course's binary with and without -f instead")
    ap.add_argument("--course-repeats", type=int, default=0, metavar="N",
                    help="grade each original N more times with the course's checker (about 55 s each): "
                    "its points run to run within this call, the spread the course itself gives the same program")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if not (Path(a.course) / "harness" / "render" / "Makefile").is_file():
        raise SystemExit(f"{a.course}: no harness (run ../shared/tools/course-harness/build.sh first)")
    for item in a.extra:
        name, _, rest = item.partition("=")
        original, _, port = rest.partition(":")
        port_file, _, cls = port.rpartition(":")
        EXTRA[name] = (Path(original).resolve(), f"{Path(port_file).resolve()}:{cls}")
    output = Path(a.output or Path(a.work) / "course-fidelity.json")
    output.parent.mkdir(parents=True, exist_ok=True)
    from circle_render.gpu import gpu_name
    from circle_render.timing.bench import current_commit
    record: dict = {"gpu": None if a.build_only else gpu_name(), "commit": current_commit()}
    if a.refbin:
        record.update(refbin(a))
    else:
        grade(a, record, output)
    write(record, output)
    if a.build_only:
        for design, entry in record["designs"].items():
            print(f"{design:<13} built in {entry['build_s']:.0f} s" + (": FAILED" if "build_error" in entry else ""))
        sys.exit(1 if any("build_error" in e for e in record["designs"].values()) else 0)
    if "designs" in record:
        print(f"\n# {record['gpu']}, commit {record['commit']}, {record['seconds']:.0f} s\n{record.get('tables', '')}")
        print("\n".join(summary_lines(record)))


if __name__ == "__main__":
    main()
