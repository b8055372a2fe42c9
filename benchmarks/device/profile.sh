#!/usr/bin/env bash
# Measuring on the GPU machine, in one call: the machine's ceilings and the stages' floors, the
# probes, the records the docs quote, a smoke run of the harness, and Nsight Compute. Steps run in
# the order given, alone on the GPU; records land in $OUT (few files: what comes back is limited).
# Usage (device, from this tree's root): bash benchmarks/device/profile.sh STEP [STEP ...]
#   rates       the machine's ceilings (benchmarks/rates.py): $OUT/rates.json
#   stages      the fast renderer's kernel times at 1024 and 4096 on the heavy scenes: $OUT/probe.json
#   floors      rates and stages, then each stage against its floor (docs/floors.md): $OUT/floors.json
#   bench       `render bench -r cuda` of this tree at 1024 (every scene), twice more on the scenes
#               with the slimmest margins (the spread): $OUT/bench-1024.json, $OUT/spread.txt
#   viewer      the viewer's GPU cost a frame: $OUT/viewer_cost.json
#   launch      CuPy's launch against the driver's through ctypes: $OUT/launch.json
#   kit         the assignment kit: the handout's ladder and pictures ($OUT/kit.json, kit-pictures.tgz)
#   scaling     10k to 10M circles, 512 to 16384 pixels: $OUT/scaling.json
#   smoke       a short run of every GPU subcommand of `python -m benchmarks` and the timer's GPU
#               tests: the harness and its one timer still run end to end ($OUT/smoke.txt)
#   ncu         Nsight Compute's main sections on the fast renderer's kernels (one launch each, on
#               rand1M, micro2M, snowsingle at 1024 and micro2M, rand1M at 4096): $OUT/ncu-*.csv
#   ncu-source "SCENE SIZE KERNEL-REGEX LABEL" ...   the full set with SASS per instruction on one
#               kernel per spec: $OUT/LABEL-details.csv, $OUT/LABEL-sass.csv (the specs end the list)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CIRCLE_RENDER_CACHE=${CIRCLE_RENDER_CACHE:-/tmp/cr-cache}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
B="python -m benchmarks"
HEAVY=rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)

step() {          # step NAME TIMEOUT COMMAND...: run it, print its tail and how it ended
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "/tmp/smoke-$name.log" 2>&1
  echo "== $name: rc=$? in $((SECONDS - t0)) s: $*"
  tail -n "${TAIL:-4}" "/tmp/smoke-$name.log" | cut -c1-220
}

smoke() {
  step tests 90 python -m pytest -q -p no:cacheprovider tests/timing/test_timer.py tests/timing/test_benchmarks_cli.py \
      tests/scenes/test_animation.py tests/cuda/test_primitives.py -k "timer or event or frames or phase or saxpy or subcommand or help"
  step bench 60 $B bench --scenes rgb,rand10k,rand1M --runs 2 -o /tmp/smoke-bench.json
  TAIL=1 step frames 30 $B frames --cases rgb:1024,rand10k:1024,rand1M:4096
  step stages 40 $B stages --scenes rgb,rand10k -o /tmp/smoke-stages.json
  TAIL=2 step supergrid 30 $B supergrid --scene rand100k --size 1024 --grids 8,16
  TAIL=12 step rates 30 $B rates -o /tmp/smoke-rates.json
  TAIL=3 step scaling 60 $B scaling --quick --runs 1 -o /tmp/smoke-scaling.json
  TAIL=8 step launch 30 $B launch -o /tmp/smoke-launch.json
  TAIL=2 step primitives 60 $B primitives --saxpy-n 10000000 -o /tmp/smoke-primitives.json
  TAIL=1 step scan-shapes 30 $B scan-shapes --sizes 1000000
  TAIL=3 step viewer 30 $B viewer --scenes rand10k,snow --frames 6 -o /tmp/smoke-viewer.json
  TAIL=3 step gpu-check 60 $B gpu-check --sizes 64 --seeds 0 --scenes rgb,rand10k,snow -o /tmp/smoke-gpu_check.json
  TAIL=3 step kit 90 $B kit --size 64 -o /tmp/smoke-kit.json --pictures /tmp/smoke-kit
}

ncu_sections() {
  echo "ncu: ${NCU:-none}"; [ -n "$NCU" ] || return 0
  local sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
  for spec in "rand1M 1024" "micro2M 1024" "snowsingle 1024" "micro2M 4096" "rand1M 4096"; do
    set -- $spec
    timeout 150 $NCU $sections --launch-skip 0 --csv --page details \
       $B profile --scenes $1 --size $2 > $OUT/ncu-$1-$2.csv 2> /tmp/ncu-$1-$2.err
    echo "$1 $2 rc=$? lines=$(wc -l < $OUT/ncu-$1-$2.csv)"
  done
}

ncu_source() {    # ncu_source "scene size kernel-regex label" ...
  echo "ncu: ${NCU:-none}"; [ -n "$NCU" ] || return 0
  local spec rep
  for spec in "$@"; do
    set -- $spec
    rep=/tmp/$4
    timeout 200 $NCU --set full --import-source yes -k "regex:$3" --launch-count 1 -f -o $rep \
      $B profile --scenes $1 --size $2 > /tmp/$4.log 2>&1
    echo "$spec rc=$?"; tail -3 /tmp/$4.log
    $NCU -i $rep.ncu-rep --page details --csv > $OUT/$4-details.csv 2>/dev/null
    $NCU -i $rep.ncu-rep --page source --csv --print-source sass > $OUT/$4-sass.csv 2>/dev/null
    wc -c $OUT/$4-details.csv $OUT/$4-sass.csv
  done
}

[ $# -gt 0 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d'; exit 2; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
while [ $# -gt 0 ]; do
  s=$1; shift
  echo "## $s"
  case $s in
    rates) timeout 120 $B rates -o $OUT/rates.json 2>&1 | tail -12 ;;
    stages) timeout 240 $B stages --scenes $HEAVY --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -16 ;;
    floors) [ -f $OUT/rates.json ] || timeout 120 $B rates -o $OUT/rates.json 2>&1 | tail -12
            [ -f $OUT/probe.json ] || timeout 240 $B stages --scenes $HEAVY --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -16
            $B floors --rates $OUT/rates.json --probe $OUT/probe.json -o /tmp/floors.md --json $OUT/floors.json; tail -30 /tmp/floors.md ;;
    bench) timeout 200 python -m circle_render bench -r cuda -o $OUT/bench-1024.json 2>/dev/null | tail -15
           for k in 1 2; do
             timeout 60 python -m circle_render bench -r cuda --scenes snowsingle,rand10k,snow,micro2M 2>/dev/null | tail -4
           done | tee $OUT/spread.txt ;;
    viewer) timeout 100 $B viewer -o $OUT/viewer_cost.json | tail -20 ;;
    launch) timeout 90 $B launch -o $OUT/launch.json > /dev/null 2>/tmp/launch.err; tail -3 /tmp/launch.err ;;
    kit) timeout 240 $B kit -o $OUT/kit.json --pictures /tmp/kit 2>&1 | tail -42
         tar czf $OUT/kit-pictures.tgz -C /tmp kit ;;
    scaling) timeout 240 $B scaling -o $OUT/scaling.json 2>&1 | tail -26 ;;
    smoke) smoke 2>&1 | tee $OUT/smoke.txt ;;
    ncu) ncu_sections ;;
    ncu-source) ncu_source "$@"; set -- ;;
    *) echo "profile.sh: unknown step '$s'; accepted: rates, floors, stages, bench, viewer, launch, kit, scaling, smoke, ncu, ncu-source SPEC..." >&2; exit 2 ;;
  esac
done
