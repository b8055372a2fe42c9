#!/usr/bin/env bash
# The closing device call of a change to GPU code: final.sh (GPU suite, stage probe, bench at
# 1024 and 4096), then the reference cache and `render check -r cuda` under both rules.
# Usage (device): CIRCLE_RENDER_COMMIT=abc bash benchmarks/device/verify.sh
source benchmarks/device/final.sh
export CIRCLE_RENDER_CACHE=/tmp/cr-cache
timeout 200 python -m benchmarks warm-cache --size 1024 -j 12 --scenes rgb,rand10k,rand100k,pattern,snowsingle,biglittle,rand1M,micro2M > /tmp/warm.log 2>&1; tail -2 /tmp/warm.log
for rules in cmu cs149; do
  timeout 150 python -m circle_render check -r cuda --rules $rules 2> /tmp/check-$rules.err > $OUT/check-$rules.txt
  echo "check $rules exit: $?"; tail -4 $OUT/check-$rules.txt
done
