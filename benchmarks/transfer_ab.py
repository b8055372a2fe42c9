"""CuPy's copies between pageable host memory and the GPU (``cp.asarray``, ``.get()``) against
circle_render/canvas/transfer.py's lanes, in one process, alternating run by run, for arrays of a
few sizes and lane counts: what decides transfer.UPLOAD_FROM, DOWNLOAD_FROM and LANES.

    python -m benchmarks transfer [--sizes-mb 1,4,8,16,64] [--lanes 2,4] [-o transfer.json]
"""
from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes-mb", default="1,4,8,12,16,32,64")
    ap.add_argument("--lanes", default="4,8")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    import cupy as cp

    from circle_render.canvas import transfer
    from circle_render.timing.timer import wall_times
    transfer.UPLOAD_FROM = transfer.DOWNLOAD_FROM = 0
    sync = cp.cuda.Device().synchronize

    def timed(f) -> float:
        return wall_times(f, 1, sync=sync, before=sync).min

    rows = []
    for lanes in (int(x) for x in a.lanes.split(",")):
        transfer.LANES = lanes
        transfer._lanes.cache_clear()
        transfer._pool.cache_clear()
        for mb in (float(x) for x in a.sizes_mb.split(",")):
            host = np.random.default_rng(0).random(int(mb * (1 << 20)) // 4, dtype=np.float32)
            dev = cp.asarray(host)
            assert np.array_equal(transfer.download(transfer.upload(host)), host)
            ways = {"upload cupy": lambda h=host: cp.asarray(h), "upload lanes": lambda h=host: transfer.upload(h),
                    "download cupy": lambda d=dev: d.get(), "download lanes": lambda d=dev: transfer.download(d)}
            times: dict[str, list[float]] = {k: [] for k in ways}
            for _ in range(a.runs):
                for k, f in ways.items():
                    times[k].append(timed(f))
            row = {"lanes": lanes, "mb": mb} | {k: round(min(v), 3) for k, v in times.items()}
            rows.append(row)
            up, down = row["upload cupy"] / row["upload lanes"], row["download cupy"] / row["download lanes"]
            print(f"lanes {lanes} {mb:5.1f} MB  upload cupy {row['upload cupy']:.3f} lanes {row['upload lanes']:.3f} "
                  f"({up:.2f}x)  download cupy {row['download cupy']:.3f} lanes {row['download lanes']:.3f} "
                  f"({down:.2f}x)", flush=True)
    if a.output:
        with open(a.output, "w") as f:
            json.dump({"method": "min of runs, host clock with a synchronize around each, the four ways alternating",
                       "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
