"""circle_render.render() with the drawing options against the CPU drawing libraries, on the
same circles (docs/drawing.md).

Cases: the course's random circles (SCENE@SIZE: rand10k, rand100k and rand1M at 1024, rand100k
at 4096 by default), each with alpha 0.5 and with a per-circle alpha (uniform in [0, 1), seed 0),
anti-aliasing off and on, over white; colours clipped to [0, 1] for everyone, as libraries take
them. circle-render is timed as a user calls it: one whole ``circle_render.render(positions,
radii, rgba, size, size, renderer, antialias=..., dtype=numpy.uint8, origin="upper")`` (checks,
placement, drawing, the 8-bit picture top row first, as the libraries give theirs; until
681592d the float32 picture and ``circle_render.to_bytes``), with each renderer in --renderers
(default: those that draw the options here). The
libraries draw with benchmarks/cpu_peers.py's code, one whole picture from a blank one; with
anti-aliasing on, only those that anti-alias (pycairo at its default tolerance, 0.1 px, and at
0.01 px). Times: the min over --runs, host clock. Pictures: each compared at 8 bits with
the reference renderer's picture (--reference, -r cpu by default): the largest difference (0..1)
and the pixels with a channel off by more than 0.1. Writes benchmarks/results/api-peers-COMMIT.json (-o).

    python3 -m pip install ".[peers]"
    python3 -m benchmarks api-peers [--cases rand10k@1024,rand100k@1024,rand1M@1024,rand100k@4096]
        [--alphas half,per-circle] [--aa off,on] [--renderers cpu,cpu-fast] [--runs 3] [--reference cpu]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import cpu_peers

import circle_render
from circle_render.drawing import Drawing
from circle_render.drawing.support import drawers
from circle_render.gpu import gpu_available
from circle_render.scenes import make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.timer import wall_times

RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_CASES = "rand10k@1024,rand100k@1024,rand1M@1024,rand100k@4096"
OFF_BY = 0.1                      # the course's tolerance, in 0..1 units


def circles(name: str, alphas: str, antialias: bool):
    """The course scene's circles as drawn in frame 0, with a drawing of clipped colours and the
    alpha asked for ("half" or "per-circle")."""
    s = make_scene(name)
    rng = np.random.default_rng(0)
    alpha = np.full(s.n, 0.5) if alphas == "half" else rng.uniform(0, 1, s.n)
    s.drawing = Drawing(np.ascontiguousarray(np.c_[np.clip(s.color, 0, 1), alpha], dtype=np.float32),
                        antialias=antialias)
    return s


def ours(s, size: int, renderer: str):
    """One whole render() call, as a user who wants 8-bit pixels makes it (the libraries draw
    8-bit pictures); returns 8-bit RGB, top row first. (The float32 picture converted by
    circle_render.to_bytes is the same bytes: at 4096, 0.8 s more through NumPy's conversion.)"""
    img = circle_render.render(s.position[:, :2], s.radius, s.drawing.rgba, size, size, renderer,
                               antialias=s.drawing.antialias, dtype=np.uint8, origin="upper")
    return img[:, :, :3]


def pycairo_fine(s, n):
    """pycairo with arcs flattened within 0.01 px: its picture without its own curve error."""
    old, cpu_peers.CAIRO_TOLERANCE = cpu_peers.CAIRO_TOLERANCE, 0.01
    try:
        return cpu_peers.pycairo(s, n)
    finally:
        cpu_peers.CAIRO_TOLERANCE = old


def compared(img: np.ndarray, ref: np.ndarray) -> dict:
    d = np.abs(img.astype(np.int16) - ref.astype(np.int16))
    return {"max_abs_diff": round(int(d.max()) / 255, 4), "pixels_off": int((d > OFF_BY * 255).any(axis=2).sum())}


def peers_for(antialias: bool) -> dict:
    """name -> draw function of the installed libraries that draw this case (per-circle alpha;
    anti-aliasing when asked)."""
    names = cpu_peers.ANTIALIASED if antialias else cpu_peers.PER_CIRCLE_ALPHA
    out = {}
    for name in names:
        module, draw = cpu_peers.PEERS[name]
        try:
            __import__(module)
        except ImportError:
            continue
        out[name] = draw
    if antialias and "pycairo" in out:
        out["pycairo-tol0.01"] = pycairo_fine
    return out


def measure(s, n: int, renderers: list[str], runs: int, reference: str) -> tuple[dict, str | None]:
    """One case: each renderer's and library's time and picture against the reference
    renderer's, and the fastest library (pycairo at 0.01 px is a picture, not a contender)."""
    row: dict = {}
    # each renderer's first call of a case compiles or loads its kernels: untimed (warmup)
    ref = wall_times(lambda: ours(s, n, reference), runs if reference in renderers else 1, warmup=1)
    timed = {reference: ref} if reference in renderers else {}
    for r in renderers:
        if r != reference:
            timed[r] = wall_times(lambda r=r: ours(s, n, r), runs, warmup=1)
    for r, t in timed.items():
        row[f"circle-render/{r}"] = {"s": t.min / 1e3, **compared(t.result, ref.result)}
    for peer, draw in peers_for(s.drawing.antialias).items():
        t = wall_times(lambda draw=draw: draw(s, n), runs)
        row[peer] = {"s": t.min / 1e3, **compared(t.result, ref.result)}
    libraries = [p for p in row if not p.startswith("circle-render") and p != "pycairo-tol0.01"]
    fastest = min(libraries, key=lambda p: row[p]["s"]) if libraries else None
    for r in timed:
        if fastest:
            mine = row[f"circle-render/{r}"]
            mine["x_fastest_library"] = round(row[fastest]["s"] / mine["s"], 2)
    return row, fastest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=DEFAULT_CASES, help="SCENE@SIZE, comma-separated")
    ap.add_argument("--alphas", default="half,per-circle", help="half (0.5) and/or per-circle")
    ap.add_argument("--aa", default="off,on", help="anti-aliasing off and/or on")
    usable = [r for r in drawers() if r != "cuda" or gpu_available()]
    ap.add_argument("--renderers", default=",".join(usable), help="circle-render renderers timed")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reference", default="cpu", help="the renderer whose picture the others are compared with "
                    "(cpu, the ground truth; cpu-fast once bit-identical to it, for large cases)")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    renderers = a.renderers.split(",")
    record = {"commit": current_commit(), "host": platform.node(), "cpus": os.cpu_count(), "runs": a.runs,
              "method": "one whole picture per call, host clock, min over runs; circle-render: render() with "
                        "the options; libraries: benchmarks/cpu_peers.py; differences against the reference "
                        "renderer at 8 bits",
              "off_by": OFF_BY, "renderers": renderers, "reference": a.reference,
              "missing": sorted(set(cpu_peers.PER_CIRCLE_ALPHA) - set(peers_for(False))), "cases": {}}
    for r in {a.reference, *renderers}:                           # first calls: imports, compiles
        for aa in (False, True):
            ours(circles("rgb", "half", aa), 8, r)
    record["load_average_at_start"] = [round(v, 2) for v in os.getloadavg()]     # a shared machine: say how busy
    for case in a.cases.split(","):
        name, size = case.split("@")
        n = int(size)
        for alphas in a.alphas.split(","):
            for aa in a.aa.split(","):
                s = circles(name, alphas, aa == "on")
                key = f"{name}@{n} alpha={alphas} aa={aa}"
                row, fastest = measure(s, n, renderers, a.runs, a.reference)
                record["cases"][key] = {"fastest_library": fastest, "results": row}
                save(record, a.output)
                print(key, flush=True)
                for who, v in row.items():
                    extra = f"  x{v['x_fastest_library']} the fastest library" if "x_fastest_library" in v else ""
                    print(f"  {who:<22} {v['s']:9.4f} s  max diff {v['max_abs_diff']:.3f}  "
                          f"pixels off > {OFF_BY}: {v['pixels_off']}{extra}", flush=True)
    record["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    print(f"wrote {save(record, a.output)}", file=sys.stderr)


def save(record, output) -> Path:
    """Write the record as it stands (after every case: a long run stopped early keeps what it has)."""
    out = Path(output) if output else RESULTS / f"api-peers-{record['commit'][:10]}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    return out


if __name__ == "__main__":
    main()
