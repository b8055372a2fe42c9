"""Bar chart (PNG) of a benchmark record (circle_render/timing/plot.py, which `render bench`
uses to write the plot beside its record):

    python -m benchmarks plot benchmarks/results/H100-cuda-1024-e7bf63a.json -o docs/bench.png
"""
import argparse
import json

from circle_render.timing.plot import plot_record


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("record")
    ap.add_argument("-o", "--output", default="docs/bench.png")
    a = ap.parse_args()
    with open(a.record) as f:
        plot_record(json.load(f), a.output)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
