#!/usr/bin/env bash
# One device call after a kernel change: the GPU tests of the fast renderer and its kernels
# (4 processes), then alone the stage probe at 1024 and 4096 on the heavy scenes and the
# benchmark at 1024. Usage (device): CIRCLE_RENDER_COMMIT=abc bash benchmarks/device/verify_and_probe.sh
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
i=0
for k in "test_kernel_twins" "test_gpu_renderer and (1024 or largest)" "test_gpu_renderer and not (1024 or largest)" \
         "test_assignment_gpu or test_gpu_graph or test_primitives"; do
  timeout 420 python -m pytest -q -m gpu tests -k "$k" -p no:cacheprovider -x > $OUT/pytest_$i.log 2>&1 &
  i=$((i+1))
done
wait
for f in $OUT/pytest_*.log; do grep -E "passed|failed|error" $f | tail -1; done
grep -h -E "^(FAILED|ERROR)|Error|assert" $OUT/pytest_*.log | head -20
timeout 150 python benchmarks/stage_probe.py --scenes rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle \
   --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -15
timeout 150 python -m circle_render bench -r cuda -o $OUT/bench.json 2>/dev/null | tail -15
