"""cpu-fast against the CPU libraries a Python user would pick instead, on the course's circles.

Every peer draws the same circles (a course scene at SIZE, flat shading: alpha 1/2, index 0
first) on a white picture; its time is the min over runs of one whole frame (clear and draw).
cpu-fast and -r cpu are timed by the course's method: per run a fresh renderer draws frames
0..3 (clear + advance + render each), the run's mean frame, the min over runs. Pictures are
compared with the NumPy reference's 8-bit one (max abs difference, pixels that differ, and
values off by more than the course's 0.1).
Peers that are not installed are skipped and listed. Also: cpu-fast against `-r cpu` on every
scene. Writes benchmarks/results/cpu-peers-COMMIT.json and .png.

    python3 -m pip install ".[peers]"      # pycairo needs libcairo2-dev to build; aggdraw too
    python3 -m benchmarks cpu-peers [--size 1024] [--runs 3] [--scenes rand10k,rand100k,rand1M]
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

from circle_render import registry
from circle_render.cpu.shading import to_bytes
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.frames import run_frames
from circle_render.timing.timer import Stopwatch, wall_times

RESULTS = Path(__file__).resolve().parent / "results"


# ---- the peers: each draws scene s at size n and returns (n, n, 3) uint8, top row first ----
# Each circle's alpha and anti-aliasing come from the scene's drawing (docs/drawing.md) where it
# has one (benchmarks/api_peers.py), else the course's: alpha 1/2, no anti-aliasing.

def _alphas(s):
    return s.drawing.rgba[:, 3].astype(np.float64) if s.drawing is not None else np.full(s.n, 0.5)


def _antialias(s) -> bool:
    return bool(s.drawing is not None and s.drawing.antialias)


def _colors(s):
    """Colours clipped to [0, 1] as libraries take them (rand100k's reach 1.2: the reference
    blends the float value and clips only the output)."""
    return np.clip(s.color, 0, 1)


def _boxes(s, n):
    """Centre (x, y) in pixels with y down, and radius in pixels, per circle."""
    return s.position[:, 0] * n, (1 - s.position[:, 1]) * n, s.radius * n


def pillow(s, n):
    from PIL import Image, ImageDraw
    img = Image.new("RGB", (n, n), (255, 255, 255))
    draw = ImageDraw.Draw(img, "RGBA")                   # Pillow has no anti-aliasing
    col = (_colors(s) * 255).astype(int).tolist()
    alpha = (_alphas(s) * 255 + 0.5).astype(int).tolist()
    for x, y, r, c, a in zip(*(a.tolist() for a in _boxes(s, n)), col, alpha):
        draw.ellipse((x - r, y - r, x + r, y + r), fill=(*c, a))
    return np.asarray(img)


def opencv(s, n):
    import cv2
    img = np.ones((n, n, 3), dtype=np.float32)
    smooth = _antialias(s)
    sub = 16 if smooth else 1                          # anti-aliased: 4 fractional bits (shift)
    for x, y, r, c, a in zip(*(a.tolist() for a in _boxes(s, n)), _colors(s)[:, ::-1].tolist(), _alphas(s).tolist()):
        x0, x1 = max(int(x - r) - smooth, 0), min(int(x + r) + 2 + smooth, n)
        y0, y1 = max(int(y - r) - smooth, 0), min(int(y + r) + 2 + smooth, n)
        if x0 >= x1 or y0 >= y1:
            continue
        box = img[y0:y1, x0:x1]
        overlay = box.copy()
        cv2.circle(overlay, (round((x - x0 - 0.5) * sub), round((y - y0 - 0.5) * sub)), round(r * sub), c, -1,
                   cv2.LINE_AA if smooth else cv2.LINE_8, 4 if smooth else 0)
        cv2.addWeighted(overlay, a, box, 1 - a, 0, dst=box)
    return (np.clip(img[:, :, ::-1], 0, 1) * 255).astype(np.uint8)


CAIRO_TOLERANCE = 0.1      # cairo's default: arcs become splines within 0.1 px (docs/drawing.md)


def pycairo(s, n):
    import cairo
    surface = cairo.ImageSurface(cairo.FORMAT_RGB24, n, n)
    ctx = cairo.Context(surface)
    ctx.set_antialias(cairo.ANTIALIAS_DEFAULT if _antialias(s) else cairo.ANTIALIAS_NONE)
    ctx.set_tolerance(CAIRO_TOLERANCE)
    ctx.set_source_rgb(1, 1, 1)
    ctx.paint()
    for x, y, r, c, a in zip(*(a.tolist() for a in _boxes(s, n)), _colors(s).tolist(), _alphas(s).tolist()):
        ctx.set_source_rgba(*c, a)
        ctx.arc(x, y, r, 0, 6.283185307179586)
        ctx.fill()
    bgrx = np.ndarray((n, n, 4), np.uint8, surface.get_data(), strides=(surface.get_stride(), 4, 1))
    return bgrx[:, :, 2::-1].copy()


def skia(s, n):
    import skia as sk
    surface = sk.Surface(n, n)
    canvas = surface.getCanvas()
    canvas.clear(sk.ColorWHITE)
    smooth = _antialias(s)
    for x, y, r, c, a in zip(*(a.tolist() for a in _boxes(s, n)), _colors(s).tolist(), _alphas(s).tolist()):
        canvas.drawCircle(x, y, r, sk.Paint(Color4f=sk.Color4f(*c, a), AntiAlias=smooth))
    return surface.makeImageSnapshot().toarray(colorType=sk.kRGBA_8888_ColorType)[:, :, :3].copy()


def matplotlib_collection(s, n):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import EllipseCollection
    from matplotlib.figure import Figure
    fig = Figure(figsize=(n / 100, n / 100), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_axis_off()
    d = 2 * s.radius
    ax.add_collection(EllipseCollection(d, d, 0, units="x", offsets=s.position[:, :2], offset_transform=ax.transData,
                                       facecolors=np.c_[_colors(s), _alphas(s)], edgecolors="none",
                                       antialiaseds=_antialias(s)))
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[:, :, :3].copy()


def aggdraw_peer(s, n):
    import aggdraw
    from PIL import Image
    img = Image.new("RGB", (n, n), (255, 255, 255))
    draw = aggdraw.Draw(img)
    draw.setantialias(_antialias(s))
    col = (_colors(s) * 255).astype(int).tolist()
    alpha = (_alphas(s) * 255 + 0.5).astype(int).tolist()
    for x, y, r, c, a in zip(*(a.tolist() for a in _boxes(s, n)), col, alpha):
        draw.ellipse((x - r, y - r, x + r, y + r), aggdraw.Brush(tuple(c), a))
    draw.flush()
    return np.asarray(img)


_NAIVE = None


def naive_numba(s, n):
    """A user's own numba loop: circle by circle over its box, in order, one thread."""
    global _NAIVE
    if _NAIVE is None:
        import numba

        @numba.njit(cache=True)
        def draw(img, pos, rad, col, n):
            half = np.float32(0.5)
            inv = np.float32(1) / np.float32(n)
            for i in range(pos.shape[0]):
                px, py, r = pos[i, 0], pos[i, 1], rad[i]
                x0, x1 = max(int((px - r) * np.float32(n)), 0), min(int((px + r) * np.float32(n)) + 1, n)
                y0, y1 = max(int((py - r) * np.float32(n)), 0), min(int((py + r) * np.float32(n)) + 1, n)
                for y in range(y0, y1):
                    dy = py - inv * (np.float32(y) + half)
                    for x in range(x0, x1):
                        dx = px - inv * (np.float32(x) + half)
                        if dy * dy + dx * dx <= r * r:
                            for c in range(3):
                                img[y, x, c] = half * col[i, c] + half * img[y, x, c]
                            img[y, x, 3] += half
        _NAIVE = draw
    img = np.ones((n, n, 4), dtype=np.float32)
    _NAIVE(img, s.position, s.radius, s.color, n)
    return to_bytes(img)


PEERS = {"pillow": ("PIL", pillow), "opencv": ("cv2", opencv), "pycairo": ("cairo", pycairo),
         "skia-python": ("skia", skia), "matplotlib": ("matplotlib", matplotlib_collection),
         "aggdraw": ("aggdraw", aggdraw_peer), "naive-numba": ("numba", naive_numba)}
ANTIALIASED = ("opencv", "pycairo", "skia-python", "matplotlib", "aggdraw")   # the peers that anti-alias
PER_CIRCLE_ALPHA = ("pillow", *ANTIALIASED)                                 # ... and that take each alpha


# ---- timing ----

def frame_time(renderer_name, scene, n, runs):
    """(seconds per frame, the last frame as 8-bit RGB) by the course's method: per run a fresh
    renderer draws frames 0..3 (clear + advance + render each), the run's mean frame; the min
    over runs."""
    best = None
    for _ in range(runs):
        r = registry.create(renderer_name)
        r.load(scene, n, n)
        total = run_frames(r, 0, 4).mean("total")
        best = total if best is None else min(best, total)
    return best / 1e3, to_bytes(r.get_image())


def peer_time(draw, scene, n, runs):
    t = wall_times(lambda: draw(scene, n), runs)
    return t.min / 1e3, t.result


def difference(img, ref):
    d = np.abs(img.astype(np.int16) - ref.astype(np.int16))
    return {"max_abs_diff": int(d.max()), "pixels_differing": int((d > 0).any(axis=2).sum()),
            "values_off_by_more_than_0.1": int((d > 25).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenes", default="rand10k,rand100k,rand1M", help="scenes the peers draw")
    ap.add_argument("--all-scenes", default=",".join(SCENE_NAMES), help="scenes for cpu-fast against cpu")
    ap.add_argument("--cpu-runs", type=int, default=3, help="runs of -r cpu (the slow reference)")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    import numba
    commit = current_commit()
    record = {"commit": commit, "host": platform.node(), "cpus": os.cpu_count(), "numba_threads": None,
              "threading_layer": None, "size": a.size, "runs": a.runs,
              "method": "peers: one frame from a blank picture; cpu-fast and cpu: the course's method (per run a "
                        "fresh renderer, frames 0..3 of clear + advance + render, the mean frame); host clock, "
                        "min over runs; differences against the NumPy reference's 8-bit picture",
              "peers": {}, "skipped": {}, "scenes": {}}
    with Stopwatch() as compile_time:
        first = registry.create("cpu-fast")
        first.load(make_scene("rgb"), 8, 8)
        first.render()
    record["first_call_compile_s"] = compile_time.s
    record["threading_layer"] = numba.threading_layer()     # asked only now: asking launches the threads
    record["numba_threads"] = numba.get_num_threads()
    refs, fast_images = {}, {}
    for name in a.all_scenes.split(","):
        scene = make_scene(name)
        fast_s, fast_img = frame_time("cpu-fast", scene, a.size, a.runs)
        cpu_s, cpu_img = frame_time("cpu", scene, a.size, a.cpu_runs)
        refs[name], fast_images[name] = cpu_img, fast_img
        record["scenes"][name] = {"cpu-fast_s": fast_s, "cpu_s": cpu_s, "speedup": cpu_s / fast_s,
                                  "identical_8bit": bool(np.array_equal(fast_img, cpu_img))}
        save(record, a.output)
        print(f"{name:<14} cpu-fast {fast_s:8.4f} s  cpu {cpu_s:8.3f} s  x{cpu_s / fast_s:6.1f}", flush=True)
    for peer, (module, _) in PEERS.items():
        try:
            __import__(module)
        except ImportError as e:
            record["skipped"][peer] = f"not installed: {e}"
            continue
        record["peers"][peer] = {}
    libraries = list(record["peers"])
    for name in a.scenes.split(","):
        scene = make_scene(name)
        ref = refs[name] if name in refs else frame_time("cpu", scene, a.size, 1)[1]
        for peer in libraries:
            secs, img = peer_time(PEERS[peer][1], scene, a.size, a.runs)
            record["peers"][peer][name] = {"s": secs, **difference(img, ref)}
            save(record, a.output)
            print(f"{name:<10} {peer:<12} {secs:8.3f} s  {record['peers'][peer][name]}", flush=True)
        if name in record["scenes"]:                     # measured above: one number per scene
            fast_s, fast_img = record["scenes"][name]["cpu-fast_s"], fast_images[name]
        else:
            fast_s, fast_img = frame_time("cpu-fast", scene, a.size, a.runs)
        record["peers"].setdefault("cpu-fast", {})[name] = {"s": fast_s, **difference(fast_img, ref)}
    out = save(record, a.output)
    plot(record, out.with_suffix(".png"))
    print(f"wrote {out}", file=sys.stderr)


def save(record, output) -> Path:
    """Write the record as it stands (after every measurement, so a long run stopped early
    keeps what it measured)."""
    out = Path(output) if output else RESULTS / f"cpu-peers-{record['commit'][:10]}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    return out


def plot(record, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    peers = record["peers"]
    scenes = list(next(iter(peers.values())).keys()) if peers else []
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max(len(peers), 1)
    for k, (peer, rows) in enumerate(peers.items()):
        ax.bar([i + k * width for i in range(len(scenes))], [rows[s]["s"] for s in scenes], width, label=peer)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(scenes))], scenes)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per frame (log)")
    ax.set_title(f"{record['size']}x{record['size']}, {record['cpus']} cores, min of {record['runs']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
