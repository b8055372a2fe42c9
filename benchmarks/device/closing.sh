#!/usr/bin/env bash
# The closing device call of a session, one batch: the whole GPU suite; the handout's GPU commands;
# then alone on an idle GPU `render bench` of the old tree ($OLD) and this one, alternating, two
# rounds at 1024; then every checker table that the README quotes (cuda under both rules, the
# course's design with live Tf under both rules, the starter).
# Usage (device, from this tree): OLD=/old/tree OLD_COMMIT=abc NEW_COMMIT=def bash benchmarks/device/closing.sh
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
export CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONUNBUFFERED=1
SUITE_TIMEOUT=${SUITE_TIMEOUT:-240} source benchmarks/device/gpu_suite.sh
r() { timeout 120 python -m circle_render "$@"; echo "exit $?"; }
{ r compile assignment/my_renderer.py; r rgb -r cuda-starter -o /tmp/starter.png
  r rgb -r assignment/my_renderer.py:StudentRenderer -s 256 -c
  r check -r assignment/my_renderer.py:StudentRenderer --scenes rgb,rand10k -s 256; } > $OUT/handout.txt 2>&1
tail -3 $OUT/handout.txt
mkdir -p /tmp/b /tmp/c
for rep in 1 2; do
  for tree in old new; do
    if [ $tree = old ]; then dir=$OLD; commit=$OLD_COMMIT; else dir=$PWD; commit=$NEW_COMMIT; fi
    echo "== $tree ($commit) 1024 round $rep"
    (cd $dir && PYTHONPATH=$dir CIRCLE_RENDER_COMMIT=$commit timeout 100 python -m circle_render bench -r cuda \
       -o /tmp/b/bench-1024-$tree-$rep.json 2>/dev/null | tail -15)
  done
done 2>&1 | tee $OUT/bench.txt
tar -cf $OUT/bench-json.tar -C /tmp/b .
for rules in cmu cs149; do
  timeout 150 python -m circle_render check -r cuda --rules $rules > /tmp/c/check-cuda-$rules.txt 2>&1
  timeout 150 python -m circle_render check -r cuda-tiled --tf live --rules $rules > /tmp/c/check-tiled-tflive-$rules.txt 2>&1
done
timeout 100 python -m circle_render check -r cuda-starter --tf live --rules cmu > /tmp/c/check-starter-tflive-cmu.txt 2>&1
for f in /tmp/c/*.txt; do echo "== $f"; grep -E "Total|Tf|exit|error" $f | tail -4; done | tee $OUT/checks-summary.txt
tar -cf $OUT/checks.tar -C /tmp/c .
