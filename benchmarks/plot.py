"""Bar chart (PNG) of a benchmark record: our per-frame Total per scene against the course's
reference time, on a log scale, with the ratio written next to each pair.

    python -m benchmarks plot benchmarks/results/H100-cuda-1024-e7bf63a.json -o docs/bench.png
"""
import argparse
import json
import math

from PIL import Image, ImageDraw

OURS, COURSE, INK, GRID = (40, 110, 200), (200, 120, 40), (20, 20, 20), (215, 215, 215)


def plot(record: dict, path: str) -> None:
    scenes = list(record["scenes"].items())
    row, left, width = 34, 120, 560
    img = Image.new("RGB", (left + width + 110, 70 + row * len(scenes) + 40), "white")
    d = ImageDraw.Draw(img)
    times = [t for _, e in scenes for t in (e["total_ms"], e.get("course_ref_ms")) if t]
    lo, hi = math.floor(math.log10(min(times))), math.ceil(math.log10(max(times)))

    def x(ms):
        return left + width * (math.log10(ms) - lo) / (hi - lo)

    d.text((10, 8), f"{record['gpu']}, {record['size']}x{record['size']}, renderer "
                    f"'{record['renderer']}' at {record['commit'][:7]}: per-frame Total (ms, log scale)", fill=INK)
    d.rectangle((10, 28, 22, 38), fill=OURS); d.text((28, 27), "ours", fill=INK)
    d.rectangle((80, 28, 92, 38), fill=COURSE); d.text((98, 27), "course reference", fill=INK)
    top = 55
    for p in range(lo, hi + 1):
        gx = x(10.0 ** p)
        d.line((gx, top, gx, top + row * len(scenes)), fill=GRID)
        d.text((gx - 12, top + row * len(scenes) + 4), f"1e{p}", fill=INK)
    for k, (name, e) in enumerate(scenes):
        y = top + k * row
        d.text((10, y + 9), name, fill=INK)
        d.rectangle((left, y + 4, x(e["total_ms"]), y + 15), fill=OURS)
        if e.get("course_ref_ms"):
            d.rectangle((left, y + 17, x(e["course_ref_ms"]), y + 28), fill=COURSE)
            d.text((left + width + 8, y + 9), f"{e['ratio']:.3f}x", fill=INK)
        else:
            d.text((left + width + 8, y + 9), f"{e['total_ms']:.3f} ms", fill=INK)
    img.save(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("-o", "--output", default="docs/bench.png")
    a = ap.parse_args()
    with open(a.record) as f:
        plot(json.load(f), a.output)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
