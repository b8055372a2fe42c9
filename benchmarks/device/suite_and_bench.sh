#!/usr/bin/env bash
# One device call: the GPU test suite (4 processes at once), then alone on an idle GPU the
# benchmark of this tree and, if the tree of an earlier commit was carried as .old/, of that
# one (same machine, same hour), and the launch-overhead comparison.
# Usage (device): bash benchmarks/device/suite_and_bench.sh [OLD_COMMIT]
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
i=0
for k in "1024" "517" "2048" "not (1024 or 517 or 2048)"; do
  timeout 400 python -m pytest -q -m gpu tests -k "$k" -p no:cacheprovider > $OUT/pytest_gpu_$i.log 2>&1 &
  i=$((i+1))
done
wait
for f in $OUT/pytest_gpu_*.log; do grep -E "passed|failed|error" $f | tail -2; done
grep -h -E "^(FAILED|ERROR)" $OUT/pytest_gpu_*.log | head -30
if [ -d .old ]; then
  (cd .old && CIRCLE_RENDER_COMMIT=${1:-old} PYTHONPATH=$PWD timeout 200 python -m renderer bench -r cuda \
     -o $OUT/bench-old.json 2>/dev/null | tail -15)
fi
timeout 200 python -m circle_render bench -r cuda -o $OUT/bench-new.json 2>/dev/null | tail -15
timeout 90 python benchmarks/launch_overhead.py -o $OUT/launch.json > /dev/null 2>$OUT/launch.err; tail -3 $OUT/launch.err
