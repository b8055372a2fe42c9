#!/usr/bin/env bash
# The closing device call of a change: the draw's GPU tests on this tree, then alone on an idle
# GPU `render bench` (the course's method) of the old tree ($OLD) and of this one, alternating:
# every scene at 1024 and the heavy scenes at 4096.
# Usage (device, from this tree): OLD=/old/tree OLD_COMMIT=abc NEW_COMMIT=def bash benchmarks/device/compare_trees.sh
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
NEW=$PWD
export CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONUNBUFFERED=1
(PYTHONPATH=$NEW timeout 120 python -m pytest -q -m gpu tests/cuda/test_kernel_twins.py -p no:cacheprovider \
   -k "walks or front or bin_scan or sparse" > /tmp/t0.log 2>&1) &
(PYTHONPATH=$NEW timeout 120 python -m pytest -q -m gpu tests/cuda/test_gpu_renderer.py tests/cuda/test_gpu_graph.py -p no:cacheprovider \
   -k "not largest" > /tmp/t1.log 2>&1) &
wait
{ tail -qn1 /tmp/t0.log /tmp/t1.log; grep -h -E "^(FAILED|ERROR)" /tmp/t0.log /tmp/t1.log; } | tee $OUT/pytest-summary.txt
HEAVY=rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle
for size in 1024 4096; do
  scenes=""; [ $size = 4096 ] && scenes="--scenes $HEAVY"
  for tree in old new; do
    if [ $tree = old ]; then dir=$OLD; commit=$OLD_COMMIT; else dir=$NEW; commit=$NEW_COMMIT; fi
    echo "== $tree ($commit) $size"
    (cd $dir && PYTHONPATH=$dir CIRCLE_RENDER_COMMIT=$commit timeout 100 python -m circle_render bench -r cuda -s $size \
       $scenes -o $OUT/bench-$size-$tree.json 2>/dev/null | tail -15)
  done
done
