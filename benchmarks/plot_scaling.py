"""Log-log plots (PNG) of a scaling record (benchmarks/scaling.py): per-frame Total against
circles at 1024x1024, and against pixels for rand100k, rand1M and micro2M; the course's binary
where the facts give its time (1024x1024 only).

    python -m benchmarks plot-scaling benchmarks/results/H100-scaling-4272152.json -o docs/scaling.png
"""
import argparse
import json
import math

from PIL import Image, ImageDraw

INK, GRID = (20, 20, 20), (215, 215, 215)
COLOURS = {"random": (40, 110, 200), "rand100k": (40, 110, 200), "rand1M": (40, 160, 80),
           "micro2M": (200, 60, 60), "course": (200, 120, 40)}
COURSE_MS = {"rand10k": (1e4, 0.455), "rand100k": (1e5, 4.23), "rand1M": (1e6, 25.8), "micro2M": (2e6, 52.8)}


def panel(d, box, title, xlabel, series, xs_log, ys_log):
    x0, y0, x1, y1 = box
    lx = (math.floor(math.log10(min(xs_log))), math.ceil(math.log10(max(xs_log))))
    ly = (math.floor(math.log10(min(ys_log))), math.ceil(math.log10(max(ys_log))))

    def at(x, y):
        return (x0 + (x1 - x0) * (math.log10(x) - lx[0]) / (lx[1] - lx[0]),
                y1 - (y1 - y0) * (math.log10(y) - ly[0]) / (ly[1] - ly[0]))
    for p in range(lx[0], lx[1] + 1):
        gx = at(10 ** p, 10 ** ly[0])[0]
        d.line((gx, y0, gx, y1), fill=GRID)
        d.text((gx - 10, y1 + 4), f"1e{p}", fill=INK)
    for p in range(ly[0], ly[1] + 1):
        gy = at(10 ** lx[0], 10 ** p)[1]
        d.line((x0, gy, x1, gy), fill=GRID)
        d.text((x0 - 34, gy - 6), f"1e{p}", fill=INK)
    d.text((x0, y0 - 18), title, fill=INK)
    d.text(((x0 + x1) // 2 - 30, y1 + 18), xlabel, fill=INK)
    for _, points, colour, marker in series:
        pts = [at(x, y) for x, y in points]
        if len(pts) > 1 and marker == "dot":          # the course's points are separate scenes
            d.line(pts, fill=colour, width=2)
        for px, py in pts:
            r = 4 if marker == "dot" else 5
            (d.ellipse if marker == "dot" else d.rectangle)((px - r, py - r, px + r, py + r), fill=colour)
    ky = y0 + 4
    for label, _, colour, _ in series:
        d.rectangle((x1 - 150, ky, x1 - 140, ky + 10), fill=colour)
        d.text((x1 - 134, ky - 1), label, fill=INK)
        ky += 16


def plot(record: dict, path: str) -> None:
    img = Image.new("RGB", (1100, 470), "white")
    d = ImageDraw.Draw(img)
    d.text((10, 8), f"{record['gpu']}, renderer 'cuda' at {record['commit'][:7]}: per-frame Total in ms "
                    f"(course timing), log-log", fill=INK)
    circles = sorted((int(n), e["total_ms"]) for n, e in record["circles"].items())
    course = [COURSE_MS[k] for k in ("rand10k", "rand100k", "rand1M")]
    panel(d, (70, 60, 520, 410), "time against circles, 1024x1024", "circles",
          [("random scenes", circles, COLOURS["random"], "dot"),
           ("course binary (facts)", course, COLOURS["course"], "square")],
          [n for n, _ in circles], [t for _, t in circles] + [t for _, t in course])
    series, xs, ys = [], [], []
    for name in ("rand100k", "rand1M", "micro2M"):
        pts = sorted((int(k.split()[1]) ** 2, e["total_ms"]) for k, e in record["pixels"].items()
                     if k.split()[0] == name)
        series.append((name, pts, COLOURS[name], "dot"))
        xs += [p for p, _ in pts]
        ys += [t for _, t in pts]
    course_px = [(1024 ** 2, COURSE_MS[n][1]) for n in ("rand100k", "rand1M", "micro2M")]
    series.append(("course binary, 1024 (facts)", course_px, COLOURS["course"], "square"))   # 4.23, 25.8, 52.8
    panel(d, (620, 60, 1070, 410), "time against pixels (512^2 to 16384^2)", "pixels", series,
          xs, ys + [t for _, t in course_px])
    img.save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("-o", "--output", default="docs/scaling.png")
    a = ap.parse_args()
    with open(a.record) as f:
        plot(json.load(f), a.output)


if __name__ == "__main__":
    main()
