#!/usr/bin/env bash
# One device call: the machine's ceilings (rates.py), the fast renderer's kernel times at
# 1024 and 4096 on the heavy scenes (stage_probe.py), and the assignment kit's ladder and
# pictures (assignment_kit.py; the pictures come back as one tar file).
# Usage (device): bash benchmarks/device/probe_and_kit.sh
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 120 python -m benchmarks rates -o $OUT/rates.json 2>&1 | tail -12
timeout 240 python -m benchmarks stages --scenes rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle \
   --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -16
timeout 240 python -m benchmarks kit -o $OUT/kit.json --pictures /tmp/kit 2>&1 | tail -42
tar czf $OUT/kit-pictures.tgz -C /tmp kit
