"""Kernel-only times of the device-wide scan for tile shapes (SCAN_THREADS x SCAN_ITEMS), with
buffers allocated and zeroed outside the timed region; against CUB and a device copy.

    python -m benchmarks scan-shapes [--sizes 1000000,10000000]   (prints JSON)
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from circle_render.commands.primitives import copy_gbps, cub_scan, event_ms
from circle_render.cuda.module import load_module
from circle_render.twins.scan import exclusive_scan_i32
from circle_render.util import ceil_div

SHAPES = [(256, 16), (256, 32), (512, 16), (128, 16), (128, 32), (512, 8)]     # (SCAN_THREADS, SCAN_ITEMS)
SIZES = "1000000,10000000,40000000"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=SIZES, help="comma-separated element counts")
    a = ap.parse_args()
    import cupy as cp
    out = {}
    for n in map(int, a.sizes.split(",")):
        x_host = np.random.default_rng(n).integers(0, 10, n, dtype=np.int32)
        x, y = cp.asarray(x_host), cp.empty(n, np.int32)
        scratch = x.copy()                   # CUB scans in place
        row = {"copy_gbps": copy_gbps(4 * n), "cub_ms": event_ms(lambda scratch=scratch: cub_scan(scratch), runs=5)}
        want = exclusive_scan_i32(x_host)
        for threads, items in SHAPES:
            tile = threads * items
            tiles = ceil_div(n, tile)
            status, counter = cp.zeros(tiles, np.uint64), cp.zeros(1, np.uint64)
            f = load_module("scan.cu", {"SCAN_THREADS": threads, "SCAN_ITEMS": items}).get_function(
                "exclusive_scan_i32")
            args = (x, y, np.int64(n), status, counter, np.int64(0), np.int32(1))

            def before(status=status, counter=counter):
                status.fill(0)
                counter.fill(0)

            def launch(f=f, tiles=tiles, threads=threads, args=args):
                f((tiles,), (threads,), args)
            kernel_ms = event_ms(launch, runs=5, warmup=0, before=before)
            ok = bool(np.array_equal(cp.asnumpy(y), want))
            row[f"{threads}x{items}"] = {"kernel_ms": kernel_ms, "gbps": 8 * n / kernel_ms / 1e6, "correct": ok}
        out[n] = row
        print(n, json.dumps(row), file=sys.stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
