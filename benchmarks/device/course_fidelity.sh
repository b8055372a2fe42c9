#!/usr/bin/env bash
# The same-call proof of issue 35 on one GPU: each course-style original of examples/course_port/
# built in the course's own harness and graded by the course's checker.py, its port graded by
# render check (stored Tf where the GPU has stored times, and --tf live), tables printed last.
# Needs .course/ (../shared/tools/course-harness/build.sh) beside this tree (carried).
# Usage (device, from this tree's root):
#   CIRCLE_RENDER_COMMIT=<sha> bash benchmarks/device/course_fidelity.sh [DESIGNS] [TF] [more options]
#   DESIGNS  default tiled_scan,sort_by_tile,tile_lists,tiled_exact (pixel_loop: about 4 minutes alone)
#   TF       default stored,live; on a GPU without stored times (an H200) both are live: give live
#   more     passed to `python -m benchmarks course-fidelity`, e.g.
#            --extra NAME=ORIGINAL.cu:PORT.py:Class (a design of your own, in course_splice.py's form)
#   HELPERS=1 first times course_compat.cuh's helpers against the facts' (about 70 s).
# About 2 minutes a design with TF stored,live, 1.5 with one TF (H100); records in $OUT.
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CIRCLE_RENDER_CACHE=/tmp/cr-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
C=${COURSE:-$PWD/.course}
[ -d "$C/harness" ] || C=$(cd "$PWD/../.." 2>/dev/null && pwd)/.course      # a worktree carried under .wt/
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
if [ "${HELPERS:-0}" = 1 ]; then
  timeout 150 python -m benchmarks course-helpers -o "$OUT/course-helpers.json" > "$OUT/course-helpers.txt" 2>&1
  echo "course-helpers rc=$?"; tail -12 "$OUT/course-helpers.txt" | cut -c1-230
fi
python -m benchmarks course-fidelity --course "$C" -o "$OUT/course-fidelity.json" \
    --designs "${1:-tiled_scan,sort_by_tile,tile_lists,tiled_exact}" --tf "${2:-stored,live}" "${@:3}" \
    > "$OUT/course-fidelity.txt" 2>&1
echo "course-fidelity rc=$?"
sed -n '/^# NVIDIA\|^# .*commit/,$p' "$OUT/course-fidelity.txt"
