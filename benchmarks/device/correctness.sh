#!/usr/bin/env bash
# One batched device call: GPU tests, the full correctness sweep (8 processes in parallel,
# one per size and seed), then on an idle machine the stage probe and the benchmark.
# Everything lands in $OUT.   Usage (device): bash benchmarks/device/correctness.sh [renderer]
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
R=${1:-cuda}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
timeout 150 python -m pytest -q -m gpu tests -k "clear or animation or 64 or binning or fast or without_clear" > $OUT/pytest_gpu.log 2>&1
tail -1 $OUT/pytest_gpu.log
for size in 64 517 1024 2048; do for seed in 0 7; do
  timeout 300 python -m benchmarks gpu-check -r $R --sizes $size --seeds $seed \
    --hashes benchmarks/hashes/rand1M-517.json -o /tmp/gc_${size}_$seed.json > /tmp/gc_${size}_$seed.log 2>&1 &
done; done
wait
cat /tmp/gc_*.log > $OUT/gpu_check.log
python - <<'PY'
import glob, json, os
res = [r for f in sorted(glob.glob("/tmp/gc_*.json")) for r in json.load(open(f))["results"]]
ok = all(r["passed"] for r in res) and len(res) == 14 * 8   # every case ran and passed
json.dump({"all_passed": ok, "cases": len(res), "results": res}, open(os.environ["OUT"] + "/gpu_check.json", "w"), indent=1)
print(f"gpu_check: {sum(r['passed'] for r in res)}/{len(res)} cases passed; worst |diff| "
      f"{max(r['max_abs_diff'] for r in res):.2e}; total mismatches {sum(r['mismatches'] for r in res)}")
PY
# timing runs alone, on an idle machine
if [ "$R" = cuda ]; then timeout 100 python -m benchmarks stages -o $OUT/probe.json | tail -8; fi
timeout 120 python -m circle_render bench -r $R -o $OUT/bench.json 2>/dev/null | tail -15
