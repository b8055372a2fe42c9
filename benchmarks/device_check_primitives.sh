#!/usr/bin/env bash
# One batched device call for `render check` and the primitives: GPU tests, the reference
# cache filled in parallel, then (alone, on an idle GPU) the primitives benchmark and every
# checker table. Everything lands in $OUT.   Usage: bash benchmarks/device_check_primitives.sh
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
SCENES=rgb,rand10k,rand100k,pattern,snowsingle,biglittle,rand1M,micro2M
timeout 400 python benchmarks/warm_reference_cache.py --size 1024 --scenes $SCENES -j 8 > $OUT/warm.log 2>&1 &
WARM=$!
timeout 300 python -m pytest -q -m gpu tests/test_primitives.py tests/test_bad_input.py tests/test_check_command.py \
    tests/test_gpu_renderer.py -k "not 2048 and not 1024" > $OUT/pytest_gpu.log 2>&1
tail -1 $OUT/pytest_gpu.log
wait $WARM; cat $OUT/warm.log
timeout 200 python benchmarks/primitives_bench.py -o $OUT/primitives.json > /dev/null 2> $OUT/primitives.err
python -c "import json; r=json.load(open('$OUT/primitives.json')); print(json.dumps(r['targets'])); print(json.dumps(r['saxpy']))"
python -m renderer saxpy
python -m renderer scan -n 40000000
python -m renderer scan -n 40000000 --cub
python -m renderer scan -n 40000000 -m find_repeats -i ones
for rules in cmu cs149; do
  python -m renderer check scan --rules $rules 2>/dev/null
  python -m renderer check find_repeats --rules $rules 2>/dev/null
  timeout 200 python -m renderer check -r cuda --rules $rules --logs $OUT/logs-$rules 2> $OUT/check-$rules.err
  echo "check exit: $?"
done
