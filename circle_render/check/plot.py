"""``render check --plot FILE.png``: each scene's T against its Tf, over the points each ratio
scores. A row a scene, on one log scale of T / Tf: the band where every point is won (T <= 1.2 Tf),
a band for each point lost after it, the band of the correctness points alone (T > 10 Tf); a
mark at the scene's T / Tf, and its T, Tf and score beside it. Drawn with Pillow from the check's
record (check/result.py), as ``render bench``'s plot is (timing/plot.py).
"""
from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from circle_render.course import SLACK

LO, HI = 0.1, 20.0                   # the ratio axis T / Tf
FULL, NONE, INK, GRID, FAIL = (70, 160, 95), (205, 95, 80), (20, 20, 20), (160, 160, 160), (190, 30, 30)
TICKS = (0.1, 0.2, 0.5, 1.0, 1.2, 2.0, 5.0, 10.0, 20.0)


def bands(perf: int) -> list[tuple[float, float, int]]:
    """(from, to, performance points) along T / Tf, the course's formula: all of them up to
    1.2; perf * Tf / T rounded up, down to 1, up to 10; none past it."""
    edges = [1.2] + [perf / k for k in range(perf - 1, 0, -1) if 1.2 < perf / k < 10] + [10.0]
    out = [(0.0, 1.2, perf)]
    for a, b in itertools.pairwise(edges):
        mid = math.sqrt(a * b)
        out.append((a, b, math.ceil(perf / mid - SLACK)))
    out.append((10.0, math.inf, 0))
    return out


def _colour(points: int, perf: int) -> tuple[int, int, int]:
    if points >= perf:
        return FULL
    if points <= 0:
        return NONE
    f = points / perf                                  # lighter green to orange as points are lost
    return (int(235 - 85 * f), int(150 + 60 * f), int(70 + 20 * f))


def plot_check(record: dict[str, Any], path: str | Path) -> Path:
    """Draw the check's ``record`` into the PNG ``path``, atomically."""
    from PIL import Image, ImageDraw

    from circle_render.io.images import atomic_path
    from circle_render.timing.plot import chart_font
    perf = int(record["rules"]["perf_points"])
    scenes = record["scenes"]
    left, width, row, top = 110, 480, 30, 76
    img = Image.new("RGB", (left + width + 330, top + row * len(scenes) + 60), "white")
    d = ImageDraw.Draw(img)
    d.font = chart_font()

    def x(ratio: float) -> float:
        r = min(max(ratio, LO), HI)
        return left + width * (math.log10(r) - math.log10(LO)) / (math.log10(HI) - math.log10(LO))

    gpu = record.get("gpu") or "no GPU (Tf: the cpu-fast renderer)"
    d.text((10, 6), f"render check: {record['renderer']['name']}, {record['rules']['name']} rules, "
                    f"{record['size']}x{record['size']}, {gpu}: {record['total']}/{record['max_total']}", fill=INK)
    d.text((10, 24), "T / Tf per scene (log scale) over the points each ratio scores; Tf "
                     f"{record['tf_mode']}; circle-render {record['version']}, {record['date']}", fill=INK)
    lx = 10
    for colour, label in ((FULL, "all points (T <= 1.2 Tf)"), (_colour(perf // 2, perf), "a point less a band"),
                          (NONE, "correctness points only (T > 10 Tf)")):
        d.rectangle((lx, 48, lx + 12, 58), fill=colour)
        d.text((lx + 18, 46), label, fill=INK)
        lx += 18 + int(d.textlength(label)) + 24
    bottom = top + row * len(scenes)
    for k, s in enumerate(scenes):
        y = top + k * row
        mid = y + row // 2 - 8
        d.text((10, mid), s["scene"], fill=INK)
        t, tf = s.get("t_ms"), s.get("tf_ms")
        if not s["passed"]:
            d.text((left + 4, mid), f"FAILED: {s['reason']}"[:70], fill=FAIL)
        elif t is None or tf is None or tf <= 0:
            d.text((left + 4, mid), "no Tf: not scored by time", fill=INK)
        else:
            corr = int(record["rules"]["correctness_points"])
            for a, b, pts in bands(perf):
                if b > LO and a < HI:
                    x0, x1 = x(max(a, LO)), x(min(b, HI))
                    d.rectangle((x0, y + 5, x1, y + row - 5), fill=_colour(pts, perf), outline="white")
                    label = str(corr + pts)
                    if x1 - x0 > d.textlength(label) + 6:          # the score of the band, where it fits
                        d.text(((x0 + x1 - d.textlength(label)) / 2, mid), label, fill="white")
            cx, cy = x(t / tf), y + row // 2
            d.polygon([(cx, cy - 8), (cx + 6, cy), (cx, cy + 8), (cx - 6, cy)], fill=INK)
        tf_text = "n/a" if tf is None else f"{tf:.4f}" + ("*" if s.get("tf_live") else "")
        t_text = "n/a" if t is None else f"{t:.4f}"
        d.text((left + width + 12, mid), f"T {t_text}  Tf {tf_text} ms  {s['score']}/{s['points']}", fill=INK)
    for r in TICKS:
        gx = x(r)
        d.line((gx, top, gx, bottom), fill=GRID)
        label = f"{r:g}"
        d.text((gx - d.textlength(label) / 2, bottom + 4), label, fill=INK)
    d.text((left, bottom + 22), "T / Tf (* Tf timed live in this run)", fill=INK)
    path = Path(path)
    with atomic_path(path) as tmp:
        img.save(tmp, format="PNG")
    return path
