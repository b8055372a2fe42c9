# A short run of every GPU subcommand of `python -m benchmarks` (a few scenes, few repeats) and
# the timer's GPU tests: shows that the harness and its one timer still run end to end.
# Each step's record lands in $OUT; the log is the record of the call.
# Usage (device, from this tree): bash benchmarks/device/harness_smoke.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
step() {          # step NAME TIMEOUT COMMAND...: run it, print its tail and how it ended
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "/tmp/smoke-$name.log" 2>&1
    echo "== $name: rc=$? in $((SECONDS - t0)) s: $*"
    tail -n "${TAIL:-4}" "/tmp/smoke-$name.log" | cut -c1-220
}
B="python -m benchmarks"
step tests 90 python -m pytest -q -p no:cacheprovider tests/timing/test_timer.py tests/timing/test_benchmarks_cli.py \
    tests/scenes/test_animation.py tests/cuda/test_primitives.py -k "timer or event or frames or phase or saxpy or subcommand or help"
step bench 60 $B bench --scenes rgb,rand10k,rand1M --runs 2 -o "$OUT/bench.json"
TAIL=1 step frames 30 $B frames --cases rgb:1024,rand10k:1024,rand1M:4096
step stages 40 $B stages --scenes rgb,rand10k -o "$OUT/stages.json"
TAIL=2 step supergrid 30 $B supergrid --scene rand100k --size 1024 --grids 8,16
TAIL=12 step rates 30 $B rates -o "$OUT/rates.json"
TAIL=3 step scaling 60 $B scaling --quick --runs 1 -o "$OUT/scaling.json"
TAIL=8 step launch 30 $B launch -o "$OUT/launch.json"
TAIL=2 step primitives 60 $B primitives --saxpy-n 10000000 -o "$OUT/primitives.json"
TAIL=1 step scan-shapes 30 $B scan-shapes --sizes 1000000
TAIL=3 step viewer 30 $B viewer --scenes rand10k,snow --frames 6 -o "$OUT/viewer.json"
TAIL=3 step gpu-check 60 $B gpu-check --sizes 64 --seeds 0 --scenes rgb,rand10k,snow -o "$OUT/gpu_check.json"
TAIL=3 step kit 90 $B kit --size 64 -o "$OUT/kit.json" --pictures /tmp/kit
