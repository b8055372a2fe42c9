#!/usr/bin/env bash
# Correctness on the GPU machine, in one call: the GPU tests, the correctness sweep, the checker's
# tables and the handout's GPU commands. Steps run in the order given (default: tests); logs go to
# /tmp, what is worth keeping to $OUT (few files: what comes back from the device is limited).
# Usage (device, from this tree's root): bash benchmarks/device/gpu_suite.sh [STEP ...]
#   tests       the whole GPU suite, 4 pytest processes at once, then the checker's timing tests
#               alone on the idle GPU (about 4 min on an H100; SUITE_TIMEOUT=400 s a group);
#               each group's summary and the failures in $OUT/pytest-summary.txt
#   draw-tests  the draw's GPU tests only (kernel twins of the paths, renderers, graphs; about 1 min)
#   sweep [R]   both size/seed sweeps of `python -m benchmarks gpu-check` (renderer R, default cuda:
#               every scene at 64, 517, 1024, 2048, seeds 0 and 7, 8 processes); $OUT/gpu_check.json
#   checks      `render check` tables: cuda under both rules (stored Tf), cuda-tiled --tf live under
#               both rules, the starter (cmu, --tf live); the reference cache filled first;
#               $OUT/checks.tar and a summary
#   primitives  SAXPY, scan, find_repeats: the commands, the checker's scan tables, and
#               `python -m benchmarks primitives` ($OUT/primitives.json)
#   handout     the handout's GPU commands (compile, the starter, the scaffold drawn and checked)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CIRCLE_RENDER_CACHE=${CIRCLE_RENDER_CACHE:-/tmp/cr-cache}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
PYTEST="python -m pytest -q -m gpu -p no:cacheprovider"
T=${SUITE_TIMEOUT:-400}
summary() {       # summary NAME LOG...: each log's last count line and the failures, to $OUT/NAME
  { for f in "${@:2}"; do grep -E " in [0-9.]+s" "$f" | tail -1; done
    grep -h -E "^(FAILED|ERROR)" "${@:2}" | head -20; } | tee "$OUT/$1"
}

tests() {
  local i=0 k
  for k in "test_kernel_twins" "test_gpu_renderer and (1024 or largest or snow_at)" \
           "test_gpu_renderer and not (1024 or largest or snow_at)" \
           "not (test_kernel_twins or test_gpu_renderer or test_check_gpu)"; do
    timeout "$T" $PYTEST tests -k "$k" > /tmp/pytest_$i.log 2>&1 &
    i=$((i+1))
  done
  wait
  # the checker's timing tests compare two renderers' times: alone on the idle GPU, after the rest
  timeout "$T" $PYTEST tests/check/test_check_gpu.py > /tmp/pytest_$i.log 2>&1
  summary pytest-summary.txt /tmp/pytest_[0-9].log
}

draw_tests() {
  (timeout 120 $PYTEST tests/cuda/test_kernel_twins.py -k "walks or front or bin_scan or sparse" > /tmp/draw_0.log 2>&1) &
  (timeout 120 $PYTEST tests/cuda/test_gpu_renderer.py tests/cuda/test_gpu_graph.py -k "not largest" > /tmp/draw_1.log 2>&1) &
  wait
  summary pytest-summary.txt /tmp/draw_0.log /tmp/draw_1.log
}

sweep() {
  local r=$1 size seed
  for size in 64 517 1024 2048; do for seed in 0 7; do
    timeout 300 python -m benchmarks gpu-check -r "$r" --sizes $size --seeds $seed \
      --hashes benchmarks/hashes/rand1M-517.json -o /tmp/gc_${size}_$seed.json > /tmp/gc_${size}_$seed.log 2>&1 &
  done; done
  wait
  python - <<'PY'
import glob, json, os
res = [r for f in sorted(glob.glob("/tmp/gc_*.json")) for r in json.load(open(f))["results"]]
ok = all(r["passed"] for r in res) and len(res) == 14 * 8   # every case ran and passed
json.dump({"all_passed": ok, "cases": len(res), "results": res}, open(os.environ["OUT"] + "/gpu_check.json", "w"), indent=1)
print(f"gpu_check: {sum(r['passed'] for r in res)}/{len(res)} cases passed; worst |diff| "
      f"{max(r['max_abs_diff'] for r in res):.2e}; total mismatches {sum(r['mismatches'] for r in res)}")
PY
}

checks() {
  local rules
  mkdir -p /tmp/c
  timeout 300 python -m benchmarks warm-cache --size 1024 -j 12 \
    --scenes rgb,rand10k,rand100k,pattern,snowsingle,biglittle,rand1M,micro2M > /tmp/warm.log 2>&1; tail -2 /tmp/warm.log
  for rules in cmu cs149; do
    timeout 200 python -m circle_render check -r cuda --rules $rules --logs /tmp/logs-$rules > /tmp/c/check-cuda-$rules.txt 2>&1
    timeout 200 python -m circle_render check -r cuda-tiled --tf live --rules $rules > /tmp/c/check-tiled-tflive-$rules.txt 2>&1
  done
  timeout 150 python -m circle_render check -r cuda-starter --tf live --rules cmu --logs /tmp/logs-starter \
    > /tmp/c/check-starter-tflive-cmu.txt 2>&1
  for f in /tmp/c/*.txt; do echo "== $f"; grep -E "Total|Tf|exit|error" "$f" | tail -4; done | tee "$OUT/checks-summary.txt"
  tar -cf "$OUT/checks.tar" -C /tmp/c .
}

primitives() {
  local rules
  python -m circle_render saxpy
  python -m circle_render scan -n 40000000
  python -m circle_render scan -n 40000000 --cub
  for rules in cmu cs149; do
    python -m circle_render check scan --rules $rules 2>/dev/null
    python -m circle_render check find_repeats --rules $rules 2>/dev/null
  done
  timeout 200 python -m benchmarks primitives -o "$OUT/primitives.json" > /dev/null 2> /tmp/primitives.err
  python -c "import json; r=json.load(open('$OUT/primitives.json')); print(json.dumps(r['targets']))"
}

handout() {
  r() { timeout 120 python -m circle_render "$@"; echo "exit $?"; }
  { r compile assignment/my_renderer.py; r rgb -r cuda-starter -o /tmp/starter.png
    r rgb -r assignment/my_renderer.py:StudentRenderer -s 256 -c
    r check -r assignment/my_renderer.py:StudentRenderer --scenes rgb,rand10k -s 256; } > "$OUT/handout.txt" 2>&1
  tail -3 "$OUT/handout.txt"
}

[ $# -gt 0 ] || set -- tests
while [ $# -gt 0 ]; do
  step=$1; shift
  echo "## $step"
  case $step in
    tests) tests ;;
    draw-tests) draw_tests ;;
    sweep) R=cuda; case ${1:-} in cuda*) R=$1; shift ;; esac; sweep "$R" ;;
    checks) checks ;;
    primitives) primitives ;;
    handout) handout ;;
    *) echo "gpu_suite.sh: unknown step '$step'; accepted: tests, draw-tests, sweep [R], checks, primitives, handout" >&2; exit 2 ;;
  esac
done
