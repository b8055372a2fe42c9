#!/usr/bin/env bash
# One device call: the GPU test suite, then alone on an idle GPU the benchmark of this tree
# and, if the tree of an earlier commit was carried as .old/, of that one (same machine, same
# hour), and the launch-overhead comparison (CuPy's API against the driver through ctypes).
# Usage (device): bash benchmarks/device/suite_and_bench.sh [OLD_COMMIT]
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
source benchmarks/device/gpu_suite.sh
if [ -d .old ]; then
  (cd .old && CIRCLE_RENDER_COMMIT=${1:-old} PYTHONPATH=$PWD timeout 200 python -m renderer bench -r cuda \
     -o $OUT/bench-old.json 2>/dev/null | tail -15)
fi
timeout 200 python -m circle_render bench -r cuda -o $OUT/bench-new.json 2>/dev/null | tail -15
timeout 90 python -m benchmarks launch -o $OUT/launch.json > /dev/null 2>$OUT/launch.err; tail -3 $OUT/launch.err
