#!/usr/bin/env bash
# One device call: the GPU suite on this tree, then one frame's GPU time per scene on the old
# tree (the device copy's root, OLD) and on this one, alternating, twice.
# Usage (device, from this tree): OLD=/path/to/old/tree bash benchmarks/device/refactor_check.sh
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
NEW=$PWD
source benchmarks/device/gpu_suite.sh
for round in 1 2; do
  for tree in "$OLD" "$NEW"; do
    (cd "$tree" && PYTHONPATH=$PWD timeout 120 python "$NEW/benchmarks/frame_gpu.py" --label "$tree" 2>/dev/null) \
      | tee -a $OUT/frame-gpu.jsonl
  done
done
