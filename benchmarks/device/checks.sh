#!/usr/bin/env bash
# One batched device call for the checker, the primitives and the viewer's GPU cost: the GPU
# tests (4 processes), the reference cache filled in parallel, then alone on an idle GPU the
# primitives benchmark, the renderer benchmark, the viewer cost and every checker table.
# Everything lands in $OUT.   Usage (device): bash benchmarks/device/checks.sh
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
SCENES=rgb,rand10k,rand100k,pattern,snowsingle,biglittle,rand1M,micro2M
timeout 400 python -m benchmarks warm-cache --size 1024 --scenes $SCENES -j 6 > $OUT/warm.log 2>&1 &
WARM=$!
i=0
for k in "1024" "517" "2048" "not (1024 or 517 or 2048)"; do
  timeout 400 python -m pytest -q -m gpu tests -k "$k" -p no:cacheprovider > $OUT/pytest_gpu_$i.log 2>&1 &
  i=$((i+1))
done
wait $(jobs -p | grep -v "^$WARM$") 2>/dev/null
for f in $OUT/pytest_gpu_*.log; do tail -1 $f; done
wait $WARM; cat $OUT/warm.log
timeout 200 python -m benchmarks primitives -o $OUT/primitives.json > /dev/null 2> $OUT/primitives.err
python -c "import json; r=json.load(open('$OUT/primitives.json')); print(json.dumps(r['targets']))"
timeout 200 python -m circle_render bench -r cuda -o $OUT/bench.json 2>/dev/null | tail -15
timeout 100 python -m benchmarks viewer -o $OUT/viewer_cost.json | tail -20
python -m circle_render saxpy
python -m circle_render scan -n 40000000
python -m circle_render scan -n 40000000 --cub
for rules in cmu cs149; do
  python -m circle_render check scan --rules $rules 2>/dev/null
  python -m circle_render check find_repeats --rules $rules 2>/dev/null
  timeout 200 python -m circle_render check -r cuda --rules $rules --logs /tmp/logs-$rules 2> $OUT/check-$rules.err > $OUT/check-$rules.txt
  echo "check $rules exit: $?"; cat $OUT/check-$rules.txt
done
