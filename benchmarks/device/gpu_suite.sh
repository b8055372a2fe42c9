#!/usr/bin/env bash
# The whole GPU test suite in 4 processes at once (then the checker's timing tests alone) (about 4 minutes on the H100), logs in /tmp;
# prints each group's summary and the failures, and writes them to $OUT/pytest-summary.txt (one
# file: what comes back from the device is limited to 8). Sourced by the other device scripts.
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=${CIRCLE_RENDER_CACHE:-/tmp/cr-cache} PYTHONPATH=$PWD
i=0
for k in "test_kernel_twins" "test_gpu_renderer and (1024 or largest or snow_at)" \
         "test_gpu_renderer and not (1024 or largest or snow_at)" "not (test_kernel_twins or test_gpu_renderer or test_check_gpu)"; do
  timeout ${SUITE_TIMEOUT:-400} python -m pytest -q -m gpu tests -k "$k" -p no:cacheprovider > /tmp/pytest_$i.log 2>&1 &
  i=$((i+1))
done
wait
# the checker's timing tests compare two renderers' times: alone on the idle GPU, after the rest
timeout ${SUITE_TIMEOUT:-400} python -m pytest -q -m gpu tests/check/test_check_gpu.py -p no:cacheprovider > /tmp/pytest_$i.log 2>&1
{ for f in /tmp/pytest_*.log; do grep -E "passed|failed|error" $f | tail -1; done
  grep -h -E "^(FAILED|ERROR)" /tmp/pytest_*.log | head -20; } | tee $OUT/pytest-summary.txt
