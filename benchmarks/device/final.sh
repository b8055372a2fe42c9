#!/usr/bin/env bash
# The verifying device call: the whole GPU test suite (4 processes at once), then alone on an
# idle GPU the stage probe (1024 and 4096), the benchmark at 1024 (every scene) and at 4096
# (the heavy scenes). Usage (device): CIRCLE_RENDER_COMMIT=abc bash benchmarks/device/final.sh
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
i=0
for k in "test_kernel_twins" "test_gpu_renderer and (1024 or largest or snow_at)" \
         "test_gpu_renderer and not (1024 or largest or snow_at)" "not (test_kernel_twins or test_gpu_renderer)"; do
  timeout 400 python -m pytest -q -m gpu tests -k "$k" -p no:cacheprovider > $OUT/pytest_$i.log 2>&1 &
  i=$((i+1))
done
wait
for f in $OUT/pytest_*.log; do grep -E "passed|failed|error" $f | tail -1; done
grep -h -E "^(FAILED|ERROR)" $OUT/pytest_*.log | head -20
timeout 120 python benchmarks/stage_probe.py --scenes rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle \
   --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -15
timeout 120 python -m circle_render bench -r cuda -o $OUT/bench-1024.json 2>/dev/null | tail -15
timeout 100 python -m circle_render bench -r cuda -s 4096 --scenes rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle \
   -o $OUT/bench-4096.json 2>/dev/null | tail -8
