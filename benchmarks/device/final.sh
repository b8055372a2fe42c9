#!/usr/bin/env bash
# The verifying device call: the whole GPU test suite, then alone on an idle GPU the stage
# probe (1024 and 4096), the benchmark at 1024 (every scene) and at 4096 (the heavy scenes).
# Usage (device): CIRCLE_RENDER_COMMIT=abc bash benchmarks/device/final.sh
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
source benchmarks/device/gpu_suite.sh
timeout 120 python -m benchmarks stages --scenes rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle \
   --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -15
timeout 120 python -m circle_render bench -r cuda -o $OUT/bench-1024.json 2>/dev/null | tail -15
timeout 100 python -m circle_render bench -r cuda -s 4096 --scenes rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle \
   -o $OUT/bench-4096.json 2>/dev/null | tail -8
