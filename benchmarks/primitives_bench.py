"""Time SAXPY, exclusive scan and find_repeats on the GPU against a device copy and CuPy's CUB
scan, in one run; check the issue's targets; write a JSON record.

    python -m benchmarks primitives [-o benchmarks/results/GPU-primitives-COMMIT.json]
"""
from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from records import print_record  # benchmarks/records.py, beside this script

from circle_render.commands.primitives import copy_gbps, make_input, run_primitive, saxpy_report
from circle_render.course import stored_times
from circle_render.gpu import gpu_name
from circle_render.timing.bench import current_commit

SIZES = (10_000, 100_000, 1_000_000, 2_000_000, 10_000_000, 20_000_000, 40_000_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output")
    ap.add_argument("--saxpy-n", type=int, default=100_000_000)
    args = ap.parse_args()
    gpu = gpu_name()
    course = {k: stored_times("NVIDIA H100 80GB HBM3", k) for k in ("scan", "find_repeats", "thrust_scan")}
    record = {"gpu": gpu, "commit": current_commit(),
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "method": "CUDA events around the call, min of 3 after a warm-up; copy = "
                        "cudaMemcpyAsync device to device, bandwidth counts read + write",
              "saxpy": saxpy_report(args.saxpy_n), "sizes": {}}
    for n in SIZES:
        print(f"primitives: {n}", file=sys.stderr)
        x = make_input("random", n)
        e = {"copy_gbps": copy_gbps(4 * n)}
        for key, mode, cub in (("scan", "scan", False), ("cub_scan", "scan", True),
                               ("find_repeats", "find_repeats", False)):
            ms, wrong = run_primitive(mode, x, use_cub=cub)
            e[f"{key}_ms"], e[f"{key}_correct"] = ms, wrong is None
        ones_ms, ones_wrong = run_primitive("find_repeats", make_input("ones", n))
        e["find_repeats_ones_ms"], e["find_repeats_ones_correct"] = ones_ms, ones_wrong is None
        e["scan_gbps"] = 2 * 4 * n / e["scan_ms"] / 1e6
        e["scan_over_cub"] = e["scan_ms"] / e["cub_scan_ms"]
        e["find_repeats_over_scan"] = e["find_repeats_ms"] / e["scan_ms"]
        for k in ("scan", "find_repeats", "thrust_scan"):
            if str(n) in (course[k] or {}):
                e[f"course_{k}_ms"] = course[k][str(n)]
        record["sizes"][str(n)] = e
    s, big = record["saxpy"], record["sizes"]
    record["targets"] = {
        "saxpy_kernel_ge_90pct_copy": s["kernel_gbps"] >= 0.9 * s["copy_gbps"],
        "scan_10M_40M_within_1.25x_cub": all(big[str(n)]["scan_over_cub"] <= 1.25 for n in (10**7, 4 * 10**7)),
        "scan_40M_ge_70pct_copy": big[str(4 * 10**7)]["scan_gbps"] >= 0.7 * big[str(4 * 10**7)]["copy_gbps"],
        "find_repeats_within_2x_scan": all(e["find_repeats_over_scan"] <= 2 for e in big.values()),
        "faster_than_course_everywhere": all(
            e[f"{k}_ms"] < e[f"course_{k}_ms"] for e in big.values() for k in ("scan", "find_repeats")
            if f"course_{k}_ms" in e) and all(
            e["scan_ms"] < e["course_thrust_scan_ms"] for e in big.values() if "course_thrust_scan_ms" in e),
        "all_correct": s["correct"] and all(v for e in big.values() for k, v in e.items() if k.endswith("_correct")),
    }
    print_record(record, args.output)


if __name__ == "__main__":
    main()
