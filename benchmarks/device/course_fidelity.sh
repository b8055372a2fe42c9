#!/usr/bin/env bash
# The same-call proof of issue 35 on one GPU: each course-style original of examples/course_port/
# built in the course's own harness and graded by the course's checker.py, its port (the same
# program) graded by ONE render check --tf live --json run, from which both tables come (the Tf of
# the course's stored times where the GPU has them, and the calibrated live Tf; one T). Tables
# and PASS/FAIL (totals within 2 points, every scene within 1) printed last.
# Needs .course/ (../shared/tools/course-harness/build.sh) beside this tree (carried).
# Usage (device, from this tree's root):
#   CIRCLE_RENDER_COMMIT=<sha> bash benchmarks/device/course_fidelity.sh [DESIGNS] [more options]
#   DESIGNS  default tiled_scan,sort_by_tile; about 100 s each on an H100 (builds 20 s): two a call
#   more     passed to `python -m benchmarks course-fidelity`, e.g.
#            --extra NAME=ORIGINAL.cu:PORT.py:Class (a design of your own, in course_splice.py's form)
#   TESTS=1   first the GPU tests of render check, course_compat and the assignment (about 2.5 min)
#   HELPERS=1 first times course_compat.cuh's helpers against the facts' (about 70 s)
#   TAG=name  names the records: $OUT/course-fidelity-$TAG.json and .log (default: the designs)
# Writes at most 6 files in $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CIRCLE_RENDER_CACHE=/tmp/cr-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
C=${COURSE:-$PWD/.course}
[ -d "$C/harness" ] || C=$(cd "$PWD/../.." 2>/dev/null && pwd)/.course      # a worktree carried under .wt/
DESIGNS=${1:-tiled_scan,sort_by_tile}
TAG=${TAG:-${DESIGNS//,/-}}
START=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
if [ "${TESTS:-0}" = 1 ]; then
  # the checker's own timing tests alone on the idle GPU first, then the rest
  timeout 200 python -m pytest -q -m gpu tests/check/test_check_gpu.py -p no:cacheprovider > "$OUT/gpu-tests.txt" 2>&1
  echo "check tests rc=$?"
  timeout 240 python -m pytest -q -m gpu tests/assignment/test_course_compat_gpu.py tests/assignment/test_assignment_gpu.py \
      -p no:cacheprovider >> "$OUT/gpu-tests.txt" 2>&1
  echo "course_compat and assignment tests rc=$? ($(( $(date +%s) - START )) s in)"
  grep -E "passed|failed|error" "$OUT/gpu-tests.txt" | grep -E "^[0-9]+ |^=|in [0-9.]+s" | tail -4
  grep -E "^(FAILED|ERROR)" "$OUT/gpu-tests.txt" | head -20
fi
if [ "${HELPERS:-0}" = 1 ]; then
  timeout 150 python -m benchmarks course-helpers -o "$OUT/course-helpers.json" > "$OUT/course-helpers.txt" 2>&1
  echo "course-helpers rc=$?"; tail -12 "$OUT/course-helpers.txt" | cut -c1-230
fi
python -m benchmarks course-fidelity --course "$C" -o "$OUT/course-fidelity-$TAG.json" --designs "$DESIGNS" "${@:2}" \
    > /tmp/course-fidelity-$TAG.txt 2>&1
rc=$?
echo "course-fidelity rc=$rc ($(( $(date +%s) - START )) s in all)"
[ $rc -eq 0 ] || tail -40 /tmp/course-fidelity-$TAG.txt
grep -E "^## .*(built|checker|render check)" /tmp/course-fidelity-$TAG.txt
sed -n '/^# NVIDIA\|^# .*commit/,$p' /tmp/course-fidelity-$TAG.txt
